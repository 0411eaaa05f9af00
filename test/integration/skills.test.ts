import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { runRefused, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

// Issue 29, scopes 4-5: skills read from a SKILLS_PATH directory of this test's own, read again every 200 ms.

interface SkillFile { name: string; version: string; header?: string; body: string }

const skillText = ({ name, version, header = '', body }: SkillFile) => `---\nname: ${name}\nversion: ${version}\n${header}---\n${body}\n`;

function skillsDirectory(files: Record<string, string>): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'agentgate-skills-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(directory, file)), { recursive: true });
    writeFileSync(path.join(directory, file), text);
  }
  after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

const BRIEF_OLD = skillText({ name: 'brief', version: '1.0.0', header: 'category: writing\ndescription: Writes a brief\n', body: 'Brief-ten instructions: answer in one line.' });
const BRIEF_NEW = skillText({
  name: 'brief', version: '1.2.0', header: 'category: writing\ndescription: Writes a brief for ${audience}\nauthor: tests\nmetadata:\n  tags: [short]\n',
  body: 'Brief-twelve instructions for ${audience}: answer in one line.',
});

const catalogueFiles = {
  'writing/brief-1.0.0.md': BRIEF_OLD,
  'writing/brief-1.2.0.md': BRIEF_NEW,
  // A pre-release is not what `brief` resolves to, though its version is higher.
  'writing/brief-2.0.0-rc.1.md': skillText({ name: 'brief', version: '2.0.0-rc.1', header: 'category: writing\n', body: 'Brief release candidate.' }),
  'engineering/reviewer.md': skillText({ name: 'reviewer', version: '1.0.0', header: 'category: engineering\nrequires_role: critic\nrequires_tools: [file_read]\n', body: 'Reviewer instructions: find the weakest point.' }),
  'engineering/missing-tool.md': skillText({ name: 'missing-tool', version: '1.0.0', header: 'requires_tools: [file_read, ads_serp_extract, web_fetch]\nrequires_role: writer\n', body: 'Needs tools.' }),
  'off.md': skillText({ name: 'off', version: '1.0.0', header: 'enabled: false\n', body: 'Disabled instructions.' }),
  'capped.md': skillText({ name: 'capped', version: '1.0.0', header: 'budget_max: 30\n', body: 'Capped instructions.' }),
  'danger.md': skillText({ name: 'danger', version: '1.0.0', header: 'dangerous: true\ndescription: Deletes things\n', body: 'Danger instructions: be careful.' }),
  'live.md': skillText({ name: 'live', version: '1.0.0', body: 'Live-one instructions.' }),
  // Broken from the start: the gateway starts and names it in /readiness.
  'broken.md': '---\nname: broken\nversion: one\n---\nBroken.\n',
  'README.md': 'Not a skill.',
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function usageAgents(gateway: Gateway, taskId: string): Promise<string[]> {
  return (await gateway.sql.query('select agent_id from usage_records where task_id = $1 order by id', [taskId])).rows.map((row) => row.agent_id);
}

async function countTasks(gateway: Gateway): Promise<number> {
  return Number((await gateway.sql.query('select count(*) from tasks')).rows[0].count);
}

async function runTask(gateway: Gateway, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: 'Summarise the plan', ...body }, headers);
  assert.equal(answer.status, 200, answer.text);
  const task = await waitForTask(gateway, answer.body.task_id, 20_000, headers);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  return task;
}

describe('skills: the catalogue routes, skill tasks and reloading', () => {
  const directory = skillsDirectory(catalogueFiles);
  // `auto` would plan a task: a skill task must not.
  const gateway = useGateway({ env: { SKILLS_PATH: directory, SKILLS_RELOAD_INTERVAL_MS: '200', DEFAULT_TASK_MODE: 'auto' } });

  it('starts with a broken skill file, serving the others and naming it in /readiness, still ready', async () => {
    const readiness = await gateway().request('GET', '/readiness');
    assert.equal(readiness.status, 200, readiness.text);
    assert.equal(readiness.body.status, 'ready');
    assert.match(readiness.body.checks.skills, /^degraded: 7 skills loaded; 1 skill file not loaded .*: broken\.md: version: "one" is not a semantic version/);
    assert.equal((await gateway().request('GET', '/api/v1/skills/broken')).status, 404);
  });

  it('a SKILLS_PATH that is not a directory stops start-up, naming the setting (before any database work)', async () => {
    const refused = await runRefused('postgres://127.0.0.1:9/unused', { SKILLS_PATH: path.join(directory, 'no-such-directory') });
    assert.notEqual(refused.code, 0);
    assert.match(refused.output, /skills directory \S*no-such-directory does not exist \(set SKILLS_PATH\)/);
  });

  it('GET /api/v1/skills lists the highest release of each skill by name, with every category; ?category= filters', async () => {
    const all = await gateway().request('GET', '/api/v1/skills');
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body.skills.map((skill: any) => `${skill.name}@${skill.version}`),
      ['brief@1.2.0', 'capped@1.0.0', 'danger@1.0.0', 'live@1.0.0', 'missing-tool@1.0.0', 'off@1.0.0', 'reviewer@1.0.0']);
    assert.equal(all.body.count, 7);
    assert.deepEqual(all.body.categories, ['engineering', 'writing']);
    // Shannon's SDK `list_skills` reads exactly these fields of each (reference, SDK wire contract).
    assert.deepEqual(all.body.skills[0], {
      name: 'brief', version: '1.2.0', category: 'writing', description: 'Writes a brief for ${audience}', requires_tools: [], dangerous: false, enabled: true,
    });
    assert.deepEqual(all.body.skills.find((skill: any) => skill.name === 'off').enabled, false);

    const engineering = await gateway().request('GET', '/api/v1/skills?category=engineering');
    assert.deepEqual(engineering.body.skills.map((skill: any) => skill.name), ['reviewer'], 'missing-tool has no category, though its file is in engineering/');
    assert.equal(engineering.body.count, 1);
    assert.deepEqual(engineering.body.categories, ['engineering', 'writing']);
    const none = await gateway().request('GET', '/api/v1/skills?category=nothing');
    assert.deepEqual(none.body, { skills: [], count: 0, categories: ['engineering', 'writing'] });
  });

  it('GET /api/v1/skills/{name} gives the highest release; name@version exactly that version; else 404 Skill not found', async () => {
    const latest = await gateway().request('GET', '/api/v1/skills/brief');
    assert.equal(latest.status, 200, latest.text);
    // Shannon's SDK `get_skill` reads `skill` (snake_case keys) and its `metadata` sibling.
    assert.deepEqual(latest.body.skill, {
      name: 'brief', version: '1.2.0', category: 'writing', description: 'Writes a brief for ${audience}', requires_tools: [], dangerous: false, enabled: true,
      author: 'tests', requires_role: null, budget_max: null, metadata: { tags: ['short'] }, content: 'Brief-twelve instructions for ${audience}: answer in one line.',
    });
    assert.equal(latest.body.metadata.source_path, path.join('writing', 'brief-1.2.0.md'));
    assert.equal(latest.body.metadata.content_hash, sha256(BRIEF_NEW));
    assert.ok(Date.parse(latest.body.metadata.loaded_at) <= Date.now());

    const exact = await gateway().request('GET', '/api/v1/skills/brief@1.0.0');
    assert.equal(exact.status, 200, exact.text);
    assert.equal(exact.body.skill.version, '1.0.0');
    assert.equal(exact.body.skill.content, 'Brief-ten instructions: answer in one line.');
    assert.equal((await gateway().request('GET', '/api/v1/skills/brief@2.0.0-rc.1')).body.skill.version, '2.0.0-rc.1');
    const capped = await gateway().request('GET', '/api/v1/skills/capped');
    assert.equal(capped.body.skill.budget_max, 30);

    const overlong = await gateway().request('GET', `/api/v1/skills/${'x'.repeat(201)}`);
    assert.equal(overlong.status, 414, 'a path parameter over the server\'s limit (fastify maxParamLength)');
    assert.equal(typeof overlong.body.error, 'string');
    for (const missing of ['nothing', 'brief@9.9.9', 'brief@1.0']) {
      const answer = await gateway().request('GET', `/api/v1/skills/${missing}`);
      assert.equal(answer.status, 404, missing);
      assert.deepEqual(answer.body, { error: 'Skill not found' });
    }
  });

  it('GET /api/v1/skills/{name}/versions lists every version, highest first; 404 for an unknown name', async () => {
    const versions = await gateway().request('GET', '/api/v1/skills/brief/versions');
    assert.equal(versions.status, 200, versions.text);
    assert.equal(versions.body.name, 'brief');
    assert.equal(versions.body.count, 3);
    assert.deepEqual(versions.body.versions.map((version: any) => version.version), ['2.0.0-rc.1', '1.2.0', '1.0.0']);
    // Shannon's SDK `get_skill_versions` reads the summary fields of each.
    assert.deepEqual(versions.body.versions[2], {
      name: 'brief', version: '1.0.0', category: 'writing', description: 'Writes a brief', requires_tools: [], dangerous: false, enabled: true,
    });
    for (const missing of ['nothing', 'brief@1.0.0']) {
      const answer = await gateway().request('GET', `/api/v1/skills/${missing}/versions`);
      assert.equal(answer.status, 404, missing);
      assert.deepEqual(answer.body, { error: 'Skill not found' });
    }
  });

  it('a skill task runs its content as the agent\'s instructions: `name` the highest release, `name@version` that one, top level over context', async () => {
    const latest = await runTask(gateway(), { skill: 'brief', context: { prompt_params: { audience: 'managers' } } });
    // The mock model quotes the start of its system prompt: the skill's content, placeholders filled.
    assert.match(latest.result, /System prompt "Brief-twelve instructions for managers: answer/);
    assert.equal(latest.mode, 'skill');
    assert.equal(latest.context.skill_version, '1.2.0');
    assert.deepEqual(latest.metadata.skill, { name: 'brief', version: '1.2.0', content_hash: sha256(BRIEF_NEW) });

    const exact = await runTask(gateway(), { skill: 'brief@1.0.0', context: { skill: 'reviewer' } });
    assert.match(exact.result, /System prompt "Brief-ten instructions: answer in one/);
    assert.equal(exact.context.skill_version, '1.0.0');
    const byContext = await runTask(gateway(), { context: { skill: 'brief@1.0.0' } });
    assert.match(byContext.result, /Brief-ten instructions/);
  });

  it('requires_role selects the role and plans nothing: one model call, by the skill\'s agent', async () => {
    const task = await runTask(gateway(), { skill: 'reviewer' });
    assert.match(task.result, /System prompt "Reviewer instructions: find the weakest/);
    assert.equal(task.context.role, 'critic');
    assert.deepEqual(await usageAgents(gateway(), task.task_id), ['skill-agent'], 'no decomposition call');
    const assigned = (await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'ROLE_ASSIGNED'`, [task.task_id])).rows;
    assert.deepEqual(assigned.map((row) => row.payload), [{ skill: 'reviewer', skill_version: '1.0.0', role: 'critic', tools: ['file_read'] }]);
    // Without a skill the same `auto` gateway plans first: the decomposition is a model call of its own.
    const planned = await runTask(gateway(), {});
    assert.ok((await usageAgents(gateway(), planned.task_id)).length >= 2, 'a task without a skill is planned');
  });

  it('refuses with 400 and writes nothing: required tools the role lacks (named), a disabled or unknown skill, settings a skill cannot join', async () => {
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ skill: 'missing-tool' }, 'skill missing-tool@1.0.0 requires tools that role writer does not have here: ads_serp_extract, web_fetch'],
      [{ skill: 'off' }, 'skill off@1.0.0 is disabled'],
      [{ skill: 'nothing' }, 'skill nothing not found'],
      [{ skill: 'brief@3.0.0' }, 'skill brief@3.0.0 not found'],
      [{ context: { skill: 'broken' } }, 'skill broken not found'],
      [{ skill: 'brief', mode: 'standard' }, 'skill brief@1.2.0 runs as one agent with the skill\'s instructions; it cannot be combined with mode'],
      [{ skill: 'brief', context: { system_prompt: 'Be terse.', force_research: true } },
        'skill brief@1.2.0 runs as one agent with the skill\'s instructions; it cannot be combined with context.system_prompt, context.force_research'],
      [{ skill: 'reviewer', context: { role: 'writer' } }, 'skill reviewer@1.0.0 runs as role critic; context.role writer cannot replace it'],
      [{ skill: 'brief', context: { skill_version: '1.0.0' } }, 'context.skill_version 1.0.0 is not the version skill brief resolves to (1.2.0): ask for name@version in skill'],
    ];
    const before = await countTasks(gateway());
    for (const [body, message] of refusals) {
      const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'refused', ...body });
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.deepEqual(answer.body, { error: message });
    }
    assert.equal(await countTasks(gateway()), before);
  });

  it('budget_max caps the task\'s tokens, whatever the request asks: the answer stops within 30, a longer prompt pauses for budget', async () => {
    const within = await runTask(gateway(), { skill: 'capped', context: { token_budget: 500_000 } });
    assert.equal(Number((await gateway().sql.query('select token_budget from tasks where id = $1', [within.task_id])).rows[0].token_budget), 30);
    const used = (await gateway().sql.query('select sum(total_tokens) as total from usage_records where task_id = $1', [within.task_id])).rows[0];
    assert.ok(Number(used.total) <= 30, `spent ${used.total} tokens`);
    const thresholds = (await gateway().sql.query(`select message from task_events where task_id = $1 and type = 'BUDGET_THRESHOLD'`, [within.task_id])).rows;
    assert.ok(thresholds.some((row) => / of 30 tokens/.test(row.message)), JSON.stringify(thresholds));

    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: `Summarise: ${'the plan has many parts. '.repeat(20)}`, skill: 'capped' });
    assert.equal(submitted.status, 200, submitted.text);
    const taskId = submitted.body.task_id;
    await waitFor('the capped task to pause for budget', async () => {
      const control = (await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`)).body;
      const task = (await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body;
      return control.pause_reason === 'budget' && task.status === 'TASK_STATUS_PAUSED' ? true : undefined;
    });
    assert.deepEqual(await usageAgents(gateway(), taskId), [], 'no model call was made over the cap');
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`)).status, 200);
  });

  it('serves an edited file within seconds, keeps the last good version through a broken edit (named in /readiness), and follows added and removed files', async () => {
    const file = path.join(directory, 'live.md');
    const liveContent = async () => {
      const answer = await gateway().request('GET', '/api/v1/skills/live');
      return answer.status === 200 ? answer.body.skill.content : undefined;
    };
    writeFileSync(file, skillText({ name: 'live', version: '1.0.0', body: 'Live-two instructions.' }));
    const startedAt = Date.now();
    await waitFor('the edit to be served', async () => (await liveContent() === 'Live-two instructions.' ? true : undefined), 5_000);
    assert.ok(Date.now() - startedAt < 5_000);
    const task = await runTask(gateway(), { skill: 'live' });
    assert.match(task.result, /System prompt "Live-two instructions\."/);

    writeFileSync(file, '---\nname: live\nversion: 1.0.0\nrequires_tools: file_read\n---\nLive-three.\n');
    const degraded = await waitFor('the broken edit to show in /readiness', async () => {
      const readiness = await gateway().request('GET', '/readiness');
      return / live\.md: requires_tools/.test(readiness.body.checks.skills) ? readiness : undefined;
    }, 5_000);
    assert.equal(degraded.status, 200, 'a broken skill file does not make the process unready');
    assert.equal(await liveContent(), 'Live-two instructions.', 'the last good version is still served');
    assert.match((await runTask(gateway(), { skill: 'live' })).result, /Live-two instructions/);

    writeFileSync(file, skillText({ name: 'live', version: '1.0.0', body: 'Live-four instructions.' }));
    writeFileSync(path.join(directory, 'broken.md'), skillText({ name: 'broken', version: '1.0.0', body: 'Fixed.' }));
    writeFileSync(path.join(directory, 'engineering', 'added.md'), skillText({ name: 'added', version: '0.1.0', body: 'Added.' }));
    unlinkSync(path.join(directory, 'off.md'));
    await waitFor('the fixed and added files to be served, the removed one gone', async () => {
      const names = (await gateway().request('GET', '/api/v1/skills')).body.skills.map((skill: any) => skill.name);
      return await liveContent() === 'Live-four instructions.' && names.includes('added') && names.includes('broken') && !names.includes('off') ? true : undefined;
    }, 5_000);
    const readiness = await gateway().request('GET', '/readiness');
    assert.equal(readiness.body.checks.skills, 'ok: 8 skills loaded');
  });

  it('a second file giving a name@version already taken is named in /readiness and not served', async () => {
    writeFileSync(path.join(directory, 'zz-copy.md'), readFileSync(path.join(directory, 'writing', 'brief-1.0.0.md'), 'utf8').replace('Brief-ten', 'Copied'));
    const readiness = await waitFor('the duplicate to be named', async () => {
      const answer = await gateway().request('GET', '/readiness');
      return / zz-copy\.md: brief@1\.0\.0 is already defined in writing\/brief-1\.0\.0\.md/.test(answer.body.checks.skills) ? answer : undefined;
    }, 5_000);
    assert.equal(readiness.status, 200);
    assert.equal((await gateway().request('GET', '/api/v1/skills/brief@1.0.0')).body.skill.content, 'Brief-ten instructions: answer in one line.');
    unlinkSync(path.join(directory, 'zz-copy.md'));
  });
});

describe('skills: dangerous skills and roles, with authentication on', () => {
  const directory = skillsDirectory({
    'danger.md': skillText({ name: 'danger', version: '1.0.0', header: 'dangerous: true\ndescription: Deletes things\n', body: 'Danger instructions: be careful.' }),
    'safe.md': skillText({ name: 'safe', version: '1.0.0', body: 'Safe instructions.' }),
    'data-analysis.md': readFileSync(path.resolve(import.meta.dirname, '../../config/skills/analysis/data-analysis.md'), 'utf8'),
  });
  const gateway = useGateway({ env: { SKILLS_PATH: directory, GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', APPROVAL_ENABLED: '1' } });
  let owner: Account;
  let member: Account;
  let admin: Account;

  it('a member may list and run a safe skill, but a dangerous one answers 403 and writes nothing', async () => {
    owner = await registerAccount(gateway(), 'owner');
    member = await addMember(gateway(), owner, 'member');
    admin = await addMember(gateway(), owner, 'admin', 'admin');
    assert.equal((await gateway().request('GET', '/api/v1/skills')).status, 401, 'the catalogue needs a credential');
    const listed = await gateway().request('GET', '/api/v1/skills', undefined, withKey(member));
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.skills.map((skill: any) => [skill.name, skill.dangerous]), [['danger', true], ['data-analysis', false], ['safe', false]]);
    assert.match((await runTask(gateway(), { skill: 'safe' }, withKey(member))).result, /Safe instructions/);

    const before = await countTasks(gateway());
    const refused = await gateway().request('POST', '/api/v1/tasks', { query: 'clean up', skill: 'danger' }, withKey(member));
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error, 'Forbidden: skill danger@1.0.0 is dangerous; running it needs an admin or owner role or the skills:dangerous scope');
    assert.equal(await countTasks(gateway()), before);
  });

  it('the shipped data-analysis skill runs Python as data_analytics once another approver allows it; a member\'s key lacks tools:dangerous (403)', async () => {
    const submission = { query: 'Total these', skill: 'data-analysis', context: { mock_tool_calls: [{ tool: 'python_executor', args: { code: 'print(sum([3, 4, 5]) * 2)' } }] } };
    const refused = await gateway().request('POST', '/api/v1/tasks', submission, withKey(member));
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.error, /role data_analytics offers dangerous tools \(python_executor\); choosing it needs the tools:dangerous scope/);

    const asOwner = { authorization: `Bearer ${owner.accessToken}` };
    const submitted = await gateway().request('POST', '/api/v1/tasks', submission, asOwner);
    assert.equal(submitted.status, 200, submitted.text);
    const taskId = submitted.body.task_id;
    // The approval gate judges the tools the skill's agent is offered, as for any agent.
    const requested = await waitFor('the skill task to ask for approval', async () =>
      (await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'APPROVAL_REQUESTED'`, [taskId])).rows[0]?.payload);
    assert.deepEqual(requested.tools, ['python_executor']);
    const decided = await gateway().request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: requested.approval_id, approved: true }, withKey(admin));
    assert.equal(decided.status, 200, decided.text);

    const task = await waitForTask(gateway(), taskId, 60_000, asOwner);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.match(task.result, /System prompt "# Data analysis You analyse/);
    assert.equal(task.context.role, 'data_analytics');
    const observed = (await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'`, [taskId])).rows;
    assert.equal(observed[0]?.payload.output.stdout, '24\n');
  });

  it('an admin (and the owner) runs the dangerous skill', async () => {
    const byAdmin = await runTask(gateway(), { skill: 'danger' }, withKey(admin));
    assert.match(byAdmin.result, /System prompt "Danger instructions: be careful\./);
    const byOwner = await runTask(gateway(), { context: { skill: 'danger' } }, withKey(owner));
    assert.equal(byOwner.context.skill_version, '1.0.0');
  });
});
