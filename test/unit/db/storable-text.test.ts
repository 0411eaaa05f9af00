import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storableDeltas, storableJson, storableJsonText, storableText } from '../../../src/db/storable-text.ts';

const R = '\uFFFD';

describe('storable text', () => {
  it('a NUL and unpaired surrogates become U+FFFD, one unit each; pairs and other text stay', () => {
    assert.equal(storableText('a\u0000b\ud800c\udc00d😀'), `a${R}b${R}c${R}d😀`);
    assert.equal(storableText('a\u0000\ud800'.repeat(3)).length, 9);
    const clean = 'plain text with a literal \\u0000';
    assert.equal(storableText(clean), clean);
  });

  it('the JSON of a value has every string replaced, keys included, and is JSON.stringify\'s when nothing needs it', () => {
    const value = { 'k\u0000': ['v\ud800', { nested: 'n\u0000' }], ok: 1, pair: '😀', literal: '\\u0000 and \\ud800' };
    assert.deepEqual(JSON.parse(storableJsonText(value)), { [`k${R}`]: [`v${R}`, { nested: `n${R}` }], ok: 1, pair: '😀', literal: '\\u0000 and \\ud800' });
    const clean = { a: 'b', list: [1, null, true], literal: 'a literal \\u0000' };
    assert.equal(storableJsonText(clean), JSON.stringify(clean));
    assert.equal(storableJsonText(undefined), undefined);
    assert.deepEqual(storableJson({ when: new Date(0), text: '\u0000' }), { when: '1970-01-01T00:00:00.000Z', text: R });
    assert.equal(storableJson(undefined), null);
  });

  it('deltas keep a surrogate pair split across two of them, and replace a half left alone', () => {
    const deltas = storableDeltas();
    assert.equal(deltas.next('smile \ud83d'), 'smile ');
    assert.equal(deltas.next('\ude00 nul \u0000'), `😀 nul ${R}`);
    assert.equal(deltas.next('\ud83d'), '');
    assert.equal(deltas.next('\ud83d'), R, 'a high half followed by another high half was alone');
    assert.equal(deltas.end(), R, 'the stream ended after a high half');
    assert.equal(storableDeltas().end(), '');
  });
});
