import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

describe('a research task offline, with the fixture search provider', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto', WEB_SEARCH_PROVIDER: 'fixture' } });

  it('searches, fetches two pages from the corpus, and answers citing their urls', async () => {
    const urls = [
      'https://corpus.agentgate.example/geography/longest-rivers',
      'https://corpus.agentgate.example/geography/nile',
    ];
    const submitted = await gateway().request('POST', '/api/v1/tasks', {
      query: 'Which river is the longest?',
      context: {
        role: 'research',
        mock_tool_calls: [{ tool: 'web_search', args: { query: 'longest river' } }, { tool: 'web_fetch', args: { urls } }],
      },
    });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows } = await gateway().sql.query(
      `select type, payload from task_events where task_id = $1 and type like 'TOOL_%' order by seq`, [submitted.body.task_id]);
    assert.deepEqual(rows.map((row) => `${row.type}:${row.payload.tool}`),
      ['TOOL_INVOKED:web_search', 'TOOL_OBSERVATION:web_search', 'TOOL_INVOKED:web_fetch', 'TOOL_OBSERVATION:web_fetch']);
    assert.ok(JSON.stringify(rows[1].payload.output).includes('corpus.agentgate.example'), 'the search found corpus pages');
    // The observation event carries the output cut to its first 2,000 characters.
    const fetched = String(rows[3].payload.output);
    for (const url of urls) assert.ok(fetched.includes(`"url":"${url}"`), `fetched ${url}`);
    assert.match(fetched, /"source":"fixture"/, 'served from the corpus, with no network');
    for (const url of urls) assert.ok(task.result.includes(url), `the answer cites ${url}`);
  });
});
