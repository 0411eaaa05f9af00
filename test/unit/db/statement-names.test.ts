import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStatementNames } from '../../../src/db/statement-names.ts';

test('a text is named from its second use on, always with the same name, and different texts get different names', () => {
  const nameOf = createStatementNames();
  assert.equal(nameOf('select 1'), undefined);
  const name = nameOf('select 1');
  assert.match(name!, /^ag_[\w-]{24}$/);
  assert.equal(nameOf('select 1'), name);
  assert.equal(createStatementNames()('select 1'), undefined, 'each process counts its own uses');
  nameOf('select 2');
  assert.notEqual(nameOf('select 2'), name);
});

test('names stop at the cap: later texts go unnamed, named ones keep their names', () => {
  const nameOf = createStatementNames();
  const first = (nameOf('select 0'), nameOf('select 0'));
  for (let index = 1; index < 600; index++) {
    nameOf(`select ${index}`);
    nameOf(`select ${index}`);
  }
  assert.equal(nameOf('select 599'), undefined, 'past 512 names, a text stays unnamed');
  assert.equal(nameOf('select 0'), first);
});
