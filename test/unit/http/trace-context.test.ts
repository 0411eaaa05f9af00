import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTraceparent } from '../../../src/http/trace-context.ts';

test('a valid traceparent yields its trace id', () => {
  assert.equal(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), '4bf92f3577b34da6a3ce929d0e0e4736');
});

test('malformed, all-zero or wrong-version traceparents are ignored', () => {
  for (const value of ['garbage', '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', undefined, 42]) {
    assert.equal(parseTraceparent(value), undefined, String(value));
  }
});
