import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { createEventHub, EVENTS_CHANNEL } from '../../src/events/event-hub.ts';
import { createTestDatabase, waitFor } from '../helpers/gateway.ts';

const logger = pino({ level: 'silent' });
const CUTS = 20;

// Found by cutting every session of a gateway again and again (faults-read-only.test.ts): 80 listener connections
// were open afterwards. A connection cut while it asked to LISTEN was reported lost twice (the failed LISTEN, then
// its closed socket), each report starting a reconnect of its own; at 150 cuts Postgres refused every new
// connection ("too many clients") and the tasks stalled.
test('the event listener\'s connection cut again and again, at any moment of its reconnect: one connection is left, and it still wakes subscribers', { timeout: 60_000 }, async (t) => {
  const url = await createTestDatabase(t);
  const admin = new pg.Client({ connectionString: url });
  // Cut by the database's drop at the end of the test.
  admin.on('error', () => {});
  await admin.connect();
  t.after(() => admin.end());
  const listeners = async () => (await admin.query<{ count: number }>(
    `select count(*)::int as count from pg_stat_activity where datname = current_database() and application_name = 'agentgate-events'`,
  )).rows[0].count;
  const hub = await createEventHub(url, logger);
  let closed = false;
  t.after(async () => { if (!closed) await hub.close(); });
  let wakes = 0;
  hub.subscribe('listener-check', () => { wakes += 1; });

  const cutListeners = async () => (await admin.query(
    `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'agentgate-events'`,
  )).rowCount ?? 0;
  for (let cut = 0; cut < CUTS; cut++) {
    await cutListeners();
    // Cut again as soon as the new connection shows, while it is still starting or asking to LISTEN; then at any
    // moment, the listener idle, lost or reconnecting (its delay is 1 s).
    const deadline = Date.now() + 5_000;
    while (await cutListeners() === 0 && Date.now() < deadline);
    await sleep(Math.random() * 1_100);
  }

  await waitFor('the listener to be back', async () => ((await listeners()) >= 1 ? true : undefined));
  await sleep(2_500);
  assert.equal(await listeners(), 1, 'one listener connection, as before the cuts');
  const before = wakes;
  await admin.query(`select pg_notify($1, 'listener-check')`, [EVENTS_CHANNEL]);
  await waitFor('the notification to wake the subscriber', async () => (wakes > before ? true : undefined), 5_000);
  assert.equal(wakes, before + 1, 'one notification wakes once: no second listener hears it too');

  await hub.close();
  closed = true;
  await waitFor('the listener to be gone', async () => ((await listeners()) === 0 ? true : undefined), 5_000);
});
