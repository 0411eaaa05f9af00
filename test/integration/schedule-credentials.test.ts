import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const env = {
  GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!',
  SCHEDULE_MIN_INTERVAL_MINS: '1', SCHEDULE_POLL_INTERVAL_MS: '100',
};

/** A second key of the account, as a CI job would hold: returns its id and secret. */
async function createKey(gateway: Gateway, account: Account, name: string): Promise<{ id: string; key: string }> {
  const created = await gateway.request('POST', '/api/v1/auth/api-keys', { name }, { authorization: `Bearer ${account.accessToken}` });
  assert.equal(created.status, 201, created.text);
  return { id: created.body.id, key: created.body.key };
}

async function createSchedule(gateway: Gateway, headers: Record<string, string>): Promise<string> {
  const created = await gateway.request('POST', '/api/v1/schedules', { name: 'nightly', cron_expression: '0 3 * * *', task_query: 'Summarise the night' }, headers);
  assert.equal(created.status, 201, created.text);
  return created.body.schedule_id;
}

describe('schedules and the credential that made them', () => {
  const gateway = useGateway({ env });
  let alice: Account;
  const read = (id: string) => gateway().request('GET', `/api/v1/schedules/${id}`, undefined, withKey(alice));
  const makeDue = (id: string) => gateway().sql.query(`update schedules set status = 'ACTIVE', paused_at = null, pause_reason = null, next_run_at = now() where id = $1`, [id]);
  const runsOf = async (id: string) => (await gateway().request('GET', `/api/v1/schedules/${id}/runs`, undefined, withKey(alice))).body.runs;

  before(async () => { alice = await registerAccount(gateway(), 'alice'); });

  it('revoking the key that created a schedule pauses it at once, saying why; a run made due anyway does not start', async () => {
    const ci = await createKey(gateway(), alice, 'ci');
    const id = await createSchedule(gateway(), { 'x-api-key': ci.key });
    const created = await read(id);
    assert.equal(created.body.api_key_id, ci.id, 'the record names the key its runs act with');
    assert.equal(created.body.status, 'ACTIVE');

    const revoked = await gateway().request('DELETE', `/api/v1/auth/api-keys/${ci.id}`, undefined, withKey(alice));
    assert.equal(revoked.status, 200, revoked.text);
    const paused = (await read(id)).body;
    assert.deepEqual([paused.status, paused.next_run_at], ['PAUSED', null]);
    assert.match(paused.pause_reason, /^Auto-paused: the API key it runs as \(sk_live_[\w-]+…\) was revoked; resume it with a live credential$/);

    // A run due all the same (the schedule set active behind the gateway's back) is refused and pauses it again.
    await makeDue(id);
    const stopped = await waitFor('the schedule to pause again', async () => {
      const body = (await read(id)).body;
      return body.status === 'PAUSED' ? body : undefined;
    });
    assert.match(stopped.pause_reason, /was revoked/);
    const runs = await runsOf(id);
    assert.deepEqual(runs.map((run: any) => [run.status, run.workflow_id]), [['SKIPPED', '']]);
    assert.match(runs[0].error_message, /^refused: the API key it runs as \(sk_live_[\w-]+…\) was revoked/);
    const { rows } = await gateway().sql.query('select count(*)::int as tasks from tasks where schedule_id = $1', [id]);
    assert.equal(rows[0].tasks, 0, 'no task ran on the revoked key');
  });

  it('resuming needs a live credential and binds the schedule to it: the run acts as that key and counts in its rate limit', async () => {
    const ci = await createKey(gateway(), alice, 'ci-2');
    const id = await createSchedule(gateway(), { 'x-api-key': ci.key });
    await gateway().request('DELETE', `/api/v1/auth/api-keys/${ci.id}`, undefined, withKey(alice));
    const withRevoked = await gateway().request('POST', `/api/v1/schedules/${id}/resume`, undefined, { 'x-api-key': ci.key });
    assert.equal(withRevoked.status, 401, 'the revoked key itself cannot resume it');

    const resumer = await createKey(gateway(), alice, 'resumer');
    const resumed = await gateway().request('POST', `/api/v1/schedules/${id}/resume`, undefined, { 'x-api-key': resumer.key });
    assert.equal(resumed.status, 200, resumed.text);
    const record = (await read(id)).body;
    assert.deepEqual([record.status, record.api_key_id, record.pause_reason], ['ACTIVE', resumer.id, null]);

    // From here on the test reads signed in, so that the resuming key's count is its resume and the run.
    const signedIn = { authorization: `Bearer ${alice.accessToken}` };
    await gateway().sql.query('update schedules set next_run_at = now() where id = $1', [id]);
    const [run] = await waitFor('the run', async () => {
      const runs = (await gateway().request('GET', `/api/v1/schedules/${id}/runs`, undefined, signedIn)).body.runs;
      return runs.length > 0 ? runs : undefined;
    });
    assert.equal((await waitForTask(gateway(), run.workflow_id, 20_000, signedIn)).status, 'TASK_STATUS_COMPLETED');
    const { rows: [counted] } = await gateway().sql.query('select sum(count)::int as requests from rate_limit_windows where key = $1', [`rate:key:${resumer.id}`]);
    assert.equal(counted.requests, 2, 'the resume and the run, as requests of the key');
  });

  it('rotating the key moves its schedules to the new key; they keep running', async () => {
    const ci = await createKey(gateway(), alice, 'ci-3');
    const id = await createSchedule(gateway(), { 'x-api-key': ci.key });
    const rotated = await gateway().request('POST', '/api/v1/auth/api-keys/refresh', { id: ci.id }, withKey(alice));
    assert.equal(rotated.status, 201, rotated.text);
    const record = (await read(id)).body;
    assert.deepEqual([record.status, record.api_key_id], ['ACTIVE', rotated.body.id]);
  });

  it('a key that expired: the schedule pauses at its next run, saying so', async () => {
    const ci = await createKey(gateway(), alice, 'ci-4');
    const id = await createSchedule(gateway(), { 'x-api-key': ci.key });
    await gateway().sql.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [ci.id]);
    await makeDue(id);
    const paused = await waitFor('the schedule to pause', async () => {
      const body = (await read(id)).body;
      return body.status === 'PAUSED' ? body : undefined;
    });
    assert.match(paused.pause_reason, /^Auto-paused: the API key it runs as \(sk_live_[\w-]+…\) expired; resume it with a live credential$/);
  });

  it('a schedule created signed in runs as its user, whatever happens to their keys', async () => {
    const ci = await createKey(gateway(), alice, 'ci-5');
    const id = await createSchedule(gateway(), { authorization: `Bearer ${alice.accessToken}` });
    assert.equal((await read(id)).body.api_key_id, null);
    assert.equal((await gateway().request('DELETE', `/api/v1/auth/api-keys/${ci.id}`, undefined, withKey(alice))).status, 200);
    assert.equal((await read(id)).body.status, 'ACTIVE');
    await gateway().sql.query('update schedules set next_run_at = now() where id = $1', [id]);
    const [run] = await waitFor('the run', async () => ((await runsOf(id)).length > 0 ? runsOf(id) : undefined));
    assert.equal((await waitForTask(gateway(), run.workflow_id, 20_000, withKey(alice))).status, 'TASK_STATUS_COMPLETED');
  });
});
