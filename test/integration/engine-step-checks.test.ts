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

const statusReadsOf = (workflowId: string) => sent.filter((statement) => STATUS_READ.test(statement.text) && statement.values[0] === workflowId).length;

const stepsRun: string[] = [];
let releaseSecondStep: () => void = () => {};

const threeSteps = registerDurableWorkflow('step-checks-three', async () => {
  for (const name of ['one', 'two', 'three']) await runDurableStep(name, async () => { stepsRun.push(`${DBOS.workflowID}:${name}`); });
});

const cancelledBetween = registerDurableWorkflow('step-checks-cancelled', async () => {
  await runDurableStep('before', async () => { stepsRun.push(`${DBOS.workflowID}:before`); });
  await new Promise<void>((resolve) => { releaseSecondStep = resolve; });
  await runDurableStep('after', async () => { stepsRun.push(`${DBOS.workflowID}:after`); });
});

test('a step reads its workflow\'s status once on entering, and a workflow cancelled between steps runs no further step', async (t) => {
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
  await t.test('three steps, three status reads (six before: the engine read it twice per step)', async () => {
    const workflowId = randomUUID();
    await (await DBOS.startWorkflow(threeSteps, { workflowID: workflowId })()).getResult();
    assert.deepEqual(stepsRun.filter((step) => step.startsWith(workflowId)), ['one', 'two', 'three'].map((name) => `${workflowId}:${name}`));
    assert.equal(statusReadsOf(workflowId), 3);
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
