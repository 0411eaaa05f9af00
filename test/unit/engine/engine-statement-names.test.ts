import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { engineStatementNames } from '../../../src/engine/engine.ts';

/** The statement texts of the installed engine, for schema `dbos`; any other part it fills in reads `x`. */
async function engineTexts(): Promise<string[]> {
  const entry = createRequire(import.meta.url).resolve('@dbos-inc/dbos-sdk');
  const source = await readFile(path.join(path.dirname(entry), 'system_database.js'), 'utf8');
  return [...source.matchAll(/`([^`]*"\$\{this\.schemaName\}"[^`]*)`/g)]
    .map((match) => match[1].replaceAll('${this.schemaName}', 'dbos').replaceAll(/\$\{[^}]*\}/g, 'x'));
}

const namedOnSecondUse = (text: string) => {
  const nameOf = engineStatementNames();
  nameOf(text);
  return nameOf(text) !== undefined;
};

test('the engine statements every task runs are named; its queue statements never are', async () => {
  const texts = await engineTexts();
  const perTask = [
    /^SELECT status FROM "dbos"\.workflow_status WHERE workflow_uuid=\$1$/,
    /^SELECT output, error, child_workflow_id, function_name, serialization\s+FROM "dbos"\.operation_outputs/,
    /^INSERT INTO "dbos"\.workflow_output \(workflow_uuid, output, error\)/,
  ];
  for (const pattern of perTask) {
    const text = texts.find((candidate) => pattern.test(candidate.trim()));
    assert.ok(text, `the installed engine still sends a statement like ${pattern}`);
    assert.ok(namedOnSecondUse(text), `named: ${text}`);
  }
  // The status update as updateWorkflowStatus composes it at a workflow's end.
  assert.ok(namedOnSecondUse('UPDATE "dbos".workflow_status SET status=$2, updated_at=(EXTRACT(EPOCH FROM now()) * 1000)::bigint WHERE workflow_uuid=$1'));

  const queue = texts.filter((text) => /SKIP LOCKED|WITH RECURSIVE/.test(text));
  assert.ok(queue.length > 0, 'the engine\'s queue statements were found');
  for (const text of queue) assert.equal(namedOnSecondUse(text), false, `unnamed: ${text.slice(0, 80)}`);
});
