import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanTitle, countCharacters, titleFromModel, titleFromQuery } from '../../../src/workflows/memory/title-text.ts';

test('cleaning turns line breaks into spaces and drops control, zero-width, BOM and bidi characters', () => {
  assert.equal(cleanTitle('  Plan\u0000 for\tQ3\r\nreview\u200B\uFEFF  '), 'Plan for Q3 review');
  assert.equal(cleanTitle('\u202Egnp.exe\u202C'), 'gnp.exe');
  assert.equal(cleanTitle('👨‍👩‍👧 family'), '👨‍👩‍👧 family', 'the joiners of an emoji sequence stay');
  assert.equal(cleanTitle('\u0000\u200B \t'), '');
});

test('counts code points, not bytes or UTF-16 units', () => {
  assert.equal(countCharacters('🚀'.repeat(60)), 60);
  assert.equal(countCharacters('日本語'), 3);
});

test('the query fallback keeps its first line and cuts at a word boundary to 40 characters plus an ellipsis', () => {
  assert.equal(titleFromQuery('Short question\nwith details below'), 'Short question');
  assert.equal(titleFromQuery('Internationalization considerations for multilingual platforms'), 'Internationalization considerations for…');
  assert.equal(titleFromQuery('会'.repeat(50)), `${'会'.repeat(40)}…`, 'no spaces: cut at 40 characters');
  assert.equal(titleFromQuery(`${'a'.repeat(38)}👨‍👩‍👧`), `${'a'.repeat(38)}…`, 'never inside an emoji sequence');
  assert.equal(titleFromQuery('\u0000\n  \nsecond line'), 'second line');
});

test("a model's answer becomes a title of a few words without quotes or final punctuation", () => {
  assert.equal(titleFromModel('"Trip Planning for Kyoto."\nExtra explanation'), 'Trip Planning for Kyoto');
  assert.equal(titleFromModel('Title: **Budget Review**'), 'Budget Review');
  assert.equal(titleFromModel('京都旅行の計画。'), '京都旅行の計画');
  assert.equal(titleFromModel('one two three four five six seven eight nine ten'), 'one two three four five six seven eight');
});

test('answers that are no title are refused, so the query fallback is used', () => {
  assert.equal(titleFromModel('[Incomplete response: token limit]'), undefined);
  assert.equal(titleFromModel('x'.repeat(201)), undefined);
  assert.equal(titleFromModel('  \n\u200B'), undefined);
});
