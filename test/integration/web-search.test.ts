import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { STAND_IN_KEY, startSearchStandIn, type SearchStandIn } from '../fixtures/search-stand-ins.ts';
import { startGateway, useGateway, waitForTask, type Gateway, type GatewayOptions } from '../helpers/gateway.ts';

type EventRow = { type: string; payload: Record<string, any> | null };

const searchLongestRiver = [{ tool: 'web_search', args: { query: 'longest river' } }];

/** A research-role task whose (mock) model calls web_search once; its tool events, in order. */
async function runResearchTask(gateway: Gateway): Promise<{ task: any; events: EventRow[] }> {
  const submitted = await gateway.request('POST', '/api/v1/tasks', {
    query: 'Which river is the longest?', context: { role: 'research', mock_tool_calls: searchLongestRiver },
  });
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id);
  const { rows } = await gateway.sql.query(
    "select type, payload from task_events where task_id = $1 and type like 'TOOL_%' order by seq", [submitted.body.task_id]);
  return { task, events: rows };
}

/** The observed output as text: the event keeps a long output as a cut string, a short one as JSON. */
const observedText = (event: EventRow) => (typeof event.payload!.output === 'string' ? event.payload!.output : JSON.stringify(event.payload!.output));

/** A gateway started once the stand-in it must point at is listening. */
function useGatewayAfter(standIn: () => Promise<SearchStandIn>, env: (standInUrl: string) => Record<string, string>) {
  let gateway: Gateway | undefined;
  let vendor: SearchStandIn | undefined;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => {
    vendor = await standIn();
    const options: GatewayOptions = { env: { DEFAULT_TASK_MODE: 'auto', ...env(vendor.url) } };
    gateway = await startGateway({ after: (fn) => cleanups.push(fn) }, options);
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await vendor?.close();
  });
  return { gateway: () => gateway!, standIn: () => vendor! };
}

describe('web_search in a research task, offline (fixture provider, the default)', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto' } });

  it('the search is a TOOL_INVOKED then a free TOOL_OBSERVATION with corpus urls, and the answer sees them', async () => {
    const { task, events } = await runResearchTask(gateway());
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.deepEqual(events.map((event) => event.type), ['TOOL_INVOKED', 'TOOL_OBSERVATION']);
    const [invoked, observed] = events;
    assert.deepEqual([invoked.payload!.tool, invoked.payload!.args], ['web_search', { query: 'longest river' }]);
    assert.equal(observed.payload!.error, undefined);
    assert.equal(observed.payload!.cost_usd, 0);
    assert.match(observedText(observed), /"provider":"fixture"/);
    assert.match(observedText(observed), /https:\/\/corpus\.agentgate\.example\/geography\/longest-rivers/);
    assert.match(task.result, /Tool results: web_search: .*corpus\.agentgate\.example\/geography\//);
  });
});

describe('web_search in a research task through Brave (a stand-in at BRAVE_BASE_URL)', () => {
  const { gateway, standIn } = useGatewayAfter(() => startSearchStandIn('brave'), (url) => ({
    WEB_SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: STAND_IN_KEY, BRAVE_BASE_URL: url,
  }));

  it('the gateway calls Brave with its key and observes its results, charged at the Brave price', async () => {
    const { task, events } = await runResearchTask(gateway());
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.deepEqual(events.map((event) => event.type), ['TOOL_INVOKED', 'TOOL_OBSERVATION']);
    const request = standIn().requests.at(-1)!;
    assert.deepEqual([request.headers['x-subscription-token'], request.query.get('q'), request.query.get('count')], [STAND_IN_KEY, 'longest river', '5']);
    const observed = events[1];
    assert.equal(observed.payload!.cost_usd, 0.005);
    assert.match(observedText(observed), /"provider":"brave"/);
    assert.match(observedText(observed), /https:\/\/rivers\.example\.org\/nile/);
  });
});

describe('web_search with a vendor chosen but no key', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto', WEB_SEARCH_PROVIDER: 'exa' } });

  it('the server starts and warns; the call is an error observation naming the missing key; the task completes', async () => {
    assert.match(gateway().output(), /web search: WEB_SEARCH_PROVIDER=exa needs EXA_API_KEY; web_search calls will fail until it is set/);
    const { task, events } = await runResearchTask(gateway());
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const observed = events.find((event) => event.type === 'TOOL_OBSERVATION')!;
    assert.equal(observed.payload!.error, 'WEB_SEARCH_PROVIDER=exa needs EXA_API_KEY');
    assert.equal(observed.payload!.cost_usd, 0);
  });
});
