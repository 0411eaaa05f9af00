import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { registerAccount, withKey } from '../helpers/accounts.ts';
import { freePort, startGateway, waitForTask } from '../helpers/gateway.ts';
import { parseCompose } from '../helpers/deploy/compose.ts';
import { readImage } from '../helpers/deploy/dockerfile.ts';
import { loadKubernetesDocuments } from '../helpers/deploy/kubernetes.ts';
import { readRepoFile, ROOT } from '../helpers/deploy/repo-files.ts';

const manifests = loadKubernetesDocuments(['deploy/k8s/settings.yaml', 'deploy/k8s/gateway.yaml', 'deploy/k8s/worker.yaml'])
  .map((document) => document.manifest);
const deployment = (name: string) => manifests.find((manifest) => manifest.kind === 'Deployment' && manifest.metadata.name === name);
const gatewayPod = deployment('agentgate-gateway').spec.template.spec;
const workerPod = deployment('agentgate-worker').spec.template.spec;
const image = readImage(readRepoFile('Dockerfile'));
const compose = parseCompose(readRepoFile('deploy/compose.yaml'));

/**
 * The settings the manifests give every pod, with the Secret's values made up for the test. PORT is left
 * to the test helper, which lets the system pick a free one; the static tests check the manifests' port.
 */
function podSettings(): Record<string, string> {
  const { PORT: _port, ...settings } = manifests.find((manifest) => manifest.kind === 'ConfigMap').data;
  return { ...image.env, ...settings, JWT_SECRET: randomBytes(32).toString('hex') };
}

/** Runs a command of a health check (`node deploy/probe.ts ...`) as the container would, against `port`. */
async function runHealthCheck(command: string[], port: number): Promise<{ code: number | null; stderr: string }> {
  assert.equal(command[0], 'node');
  const check = spawn(process.execPath, command.slice(1), { cwd: ROOT, env: { PATH: process.env.PATH, PORT: String(port) } });
  let stderr = '';
  check.stderr.on('data', (chunk) => { stderr += chunk; });
  const [code] = await once(check, 'exit') as [number | null];
  return { code, stderr };
}

test('a gateway and a worker started as the Kubernetes manifests say answer their probes and run a task in production mode', async (t) => {
  const settings = podSettings();
  const gatewayArgs = gatewayPod.containers[0].args;
  assert.equal(gatewayArgs[0], 'serve');
  const gateway = await startGateway(t, { env: { ...settings, EXECUTOR_ID: 'deploy-gateway' }, args: gatewayArgs.slice(1) });
  const port = Number(new URL(gateway.url).port);

  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    const answer = await gateway.request('GET', gatewayPod.containers[0][probe].httpGet.path);
    assert.equal(answer.status, 200, `${probe}: ${answer.text}`);
  }
  for (const command of [image.healthcheck, compose.services.gateway.healthcheck.test.slice(1)]) {
    const check = await runHealthCheck(command, port);
    assert.equal(check.code, 0, `${command.join(' ')}: ${check.stderr}`);
  }
  const refused = await gateway.request('GET', '/api/v1/tasks');
  assert.equal(refused.status, 401, 'production requires a credential');

  const workerArgs = workerPod.containers[0].args;
  assert.equal(workerArgs[0], 'serve');
  const worker = await startGateway(t, { databaseUrl: gateway.databaseUrl, env: { ...settings, EXECUTOR_ID: 'deploy-worker' }, args: workerArgs.slice(1) });
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    const answer = await worker.request('GET', workerPod.containers[0][probe].httpGet.path);
    assert.equal(answer.status, 200, `worker ${probe}: ${answer.text}`);
  }
  const workerCheck = await runHealthCheck(compose.services['worker-1'].healthcheck.test.slice(1), Number(new URL(worker.url).port));
  assert.equal(workerCheck.code, 0, workerCheck.stderr);
  assert.equal((await worker.request('GET', '/api/v1/tasks')).status, 404, 'a worker serves no API');
  const account = await registerAccount(gateway, 'deploy');
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'Run me on a worker' }, withKey(account));
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id, 30_000, withKey(account));
  assert.equal(task.status, 'TASK_STATUS_COMPLETED');
  const { rows } = await gateway.sql.query('select executor_id from dbos.workflow_status where workflow_uuid = $1', [submitted.body.task_id]);
  assert.equal(rows[0].executor_id, 'deploy-worker', 'the gateway only enqueues; the worker ran it');

  const workerStop = await worker.kill('SIGTERM');
  assert.equal(workerStop.code, 0);
  assert.ok(workerStop.durationMs < workerPod.terminationGracePeriodSeconds * 1000, `the worker stopped in ${workerStop.durationMs} ms`);
  const gatewayStop = await gateway.kill('SIGTERM');
  assert.equal(gatewayStop.code, 0);
  const preStop = gatewayPod.containers[0].lifecycle.preStop.sleep.seconds;
  assert.ok(gatewayStop.durationMs < (gatewayPod.terminationGracePeriodSeconds - preStop) * 1000, `the gateway stopped in ${gatewayStop.durationMs} ms`);
});

test('the health check fails, saying why, when the server answers an error or nothing listens', async (t) => {
  const unready = http.createServer((_request, response) => response.writeHead(503).end('{"status":"not ready: database"}'));
  unready.listen(0, '127.0.0.1');
  await once(unready, 'listening');
  t.after(() => unready.close());

  const answeredError = await runHealthCheck(['node', 'deploy/probe.ts', '/readiness'], (unready.address() as AddressInfo).port);
  assert.equal(answeredError.code, 1);
  assert.match(answeredError.stderr, /\/readiness answered 503: \{"status":"not ready: database"\}/);

  const nothingListens = await runHealthCheck(['node', 'deploy/probe.ts', '/health'], await freePort());
  assert.equal(nothingListens.code, 1);
  assert.match(nothingListens.stderr, /did not answer: connect ECONNREFUSED/);
});
