import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastParagraphBreak } from '../../../console/src/paragraphs.ts';

test('a streamed answer is cut after its last finished paragraph, never inside a code fence', () => {
  assert.equal(lastParagraphBreak('one paragraph still being written'), 0);
  const two = 'First paragraph.\n\nSecond, unfinished';
  assert.equal(two.slice(lastParagraphBreak(two)), 'Second, unfinished');
  const fenced = 'Intro.\n\n```js\nconst a = 1;\n\nconst b = 2;';
  assert.equal(fenced.slice(lastParagraphBreak(fenced)), '```js\nconst a = 1;\n\nconst b = 2;', 'the open fence stays whole');
  const closed = `${fenced}\n\`\`\`\n\nAfter the code`;
  assert.equal(closed.slice(lastParagraphBreak(closed)), 'After the code');
});
