import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import pino from 'pino';
import { launchEngine, registerDurableWorkflow, runDurableStep, shutdownEngine } from '../../src/engine/engine.ts';
import { createTestDatabase, waitFor } from '../helpers/gateway.ts';

/** The engine's read of a workflow's status, as its cancel checks send it. */
const STATUS_READ = /^SELECT status FROM "dbos"\.workflow_status WHERE workflow_uuid=\$1$/;
/** The engine's own read of a step's record (which it sends after a status read of its own). */
const RECORD_READ = /^SELECT output, error, child_workflow_id, function_name, serialization\s+FROM "dbos"\.operation_outputs/;
/** Ours in its place: the status and the step's record in one statement (engine.ts, readStepRecordsWithStatus). */
const RECORD_WITH_STATUS_READ = /^SELECT s\.status, o\.function_id IS NOT NULL AS recorded\b/;

/** Every statement a pg client of this process sends, with its values (the engine's pool included). */
const sent: Array<{ text: string; values: unknown[] }> = [];
const send = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [config, values] = args as [unknown, unknown];
  const text = typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text;
  const given = Array.isArray(values) ? values : (config as { values?: unknown[] } | undefined)?.values;
  if (text !== undefined) sent.push({ text: text.trim(), values: given ?? [] });
  return send.apply(this, args);
} as typeof pg.Client.prototype.query;

const readsOf = (pattern: RegExp, workflowId: string) => sent.filter((statement) => pattern.test(statement.text) && statement.values[0] === workflowId).length;

const stepsRun: string[] = [];
let releaseSecondStep: () => void = () => {};

/** The engine's start of a workflow, as engine.ts sends a direct start: the status and input inserts in one statement. */
const START_IN_ONE_STATEMENT = /^WITH inserted AS \(\s*INSERT INTO "dbos"\.workflow_status\b/;
const INPUT_INSERT = /^INSERT INTO "dbos"\.workflow_input\b/;

const threeSteps = registerDurableWorkflow('step-checks-three', async (label: string = 'steps') => {
  const outcomes: string[] = [label];
  for (const name of ['one', 'two', 'three']) {
    outcomes.push(await runDurableStep(name, async () => {
      stepsRun.push(`${DBOS.workflowID}:${name}`);
      return `${name} at ${Date.now()}`;
    }));
  }
  return outcomes;
});

const cancelledBetween = registerDurableWorkflow('step-checks-cancelled', async () => {
  await runDurableStep('before', async () => { stepsRun.push(`${DBOS.workflowID}:before`); });
  await new Promise<void>((resolve) => { releaseSecondStep = resolve; });
  await runDurableStep('after', async () => { stepsRun.push(`${DBOS.workflowID}:after`); });
});

test('the engine\'s statements: a direct start in one, a step\'s status read with its record in one, a record replayed, and a workflow cancelled between steps runs no further step', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  await launchEngine({
    databaseUrl, role: 'all', queueLane: { workers: 2, perTenant: 2 }, executorId: 'step-checks', poolSize: 4,
    logger: pino({ level: 'warn' }), admission: { admits: () => true }, namedStatements: true,
  });
  try {
    await stepChecks(t);
  } finally {
    await shutdownEngine();
  }
});

async function stepChecks(t: TestContext): Promise<void> {
  await t.test('three steps, two reads: none for the first step of a workflow started here (six before: the engine read the status, then the record, per step)', async () => {
    const workflowId = randomUUID();
    await (await DBOS.startWorkflow(threeSteps, { workflowID: workflowId })()).getResult();
    assert.deepEqual(stepsRun.filter((step) => step.startsWith(workflowId)), ['one', 'two', 'three'].map((name) => `${workflowId}:${name}`));
    assert.equal(readsOf(RECORD_WITH_STATUS_READ, workflowId), 2);
    assert.equal(readsOf(STATUS_READ, workflowId), 0);
    assert.equal(readsOf(RECORD_READ, workflowId), 0);
  });

  await t.test('a direct start is one statement, and a repeated start gets the workflow as it is without running it again', async () => {
    const workflowId = randomUUID();
    const before = sent.length;
    const outcome = await (await DBOS.startWorkflow(threeSteps, { workflowID: workflowId })('once')).getResult();
    const startStatements = sent.slice(before).filter((statement) => START_IN_ONE_STATEMENT.test(statement.text));
    assert.equal(startStatements.length, 1);
    assert.equal(startStatements[0].values[0], workflowId);
    assert.equal(readsOf(INPUT_INSERT, workflowId), 0, 'the input went in with the status');
    assert.equal(readsOf(/^INSERT INTO "dbos"\.workflow_status\b/, workflowId), 0, 'not the engine\'s own start, a transaction of four statements');

    const again = await (await DBOS.startWorkflow(threeSteps, { workflowID: workflowId })('twice')).getResult();
    assert.deepEqual(again, outcome, 'the repeat got the first start\'s outcome');
    assert.equal(stepsRun.filter((step) => step.startsWith(workflowId)).length, 3, 'no step ran again');
    const status = await DBOS.getWorkflowStatus(workflowId);
    assert.equal(status?.status, 'SUCCESS');
  });

  await t.test('a step with a record returns it instead of running again', async () => {
    const workflowId = randomUUID();
    const first = await (await DBOS.startWorkflow(threeSteps, { workflowID: workflowId })(`input of ${workflowId}`)).getResult();
    assert.equal(first[0], `input of ${workflowId}`);
    const forkId = randomUUID();
    // The fork copies the records of the steps before the third, so those two replay from them.
    const forked = await (await DBOS.forkWorkflow<string[]>(workflowId, 2, { newWorkflowID: forkId })).getResult();
    assert.deepEqual(stepsRun.filter((step) => step.startsWith(forkId)), [`${forkId}:three`], 'only the step without a record ran');
    assert.deepEqual(forked.slice(0, 3), first.slice(0, 3), 'the stored input and the recorded outcomes came back as they were');
    assert.equal(readsOf(RECORD_WITH_STATUS_READ, forkId), 3, 'a fork is not started here: each of its steps reads');
  });

  await t.test('cancelled while between two steps: the second does not run and the workflow ends cancelled', async () => {
    const workflowId = randomUUID();
    const handle = await DBOS.startWorkflow(cancelledBetween, { workflowID: workflowId })();
    await waitFor('the first step to run', async () => (stepsRun.includes(`${workflowId}:before`) ? true : undefined));
    await DBOS.cancelWorkflow(workflowId);
    releaseSecondStep();
    await assert.rejects(handle.getResult(), /cancel/i);
    assert.equal(stepsRun.includes(`${workflowId}:after`), false, 'the step after the cancel did not run');
    assert.equal((await DBOS.getWorkflowStatus(workflowId))?.status, 'CANCELLED');
  });
}
