import t from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { anotherSite, settle } from '../helpers/http.ts';
import { agentsPath, testAgentWork } from '../agentsApi/helpers.ts';
import { connectWithToken, obtainToken, startMcpApp, toolAnswer } from './helpers.ts';

// The agent and article tools against the REST routes they mirror, with the same OAuth token.
// No agent work installed: queued runs stay queued, so the run counts are exact.
const ctx = await startMcpApp({ agentWork: testAgentWork(null), env: { WRITE_RATE_LIMIT_PER_MINUTE: '1000' } });
t.teardown(() => ctx.app.close());
const { base, tenant } = ctx;
const siteId = tenant.siteId;
const token = await obtainToken(ctx, { scope: 'agents:read agents:write articles:read articles:write' });
const client = await connectWithToken(ctx.mcpUrl, token);
t.teardown(() => client.close());

const call = async (name: string, args: Record<string, unknown>) => toolAnswer(await client.callTool({ name, arguments: { siteId, ...args } }));
const rest = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, any> };
};
const agents = agentsPath(siteId);

t.test('list_agents answers what GET .../agents answers', async (t) => {
  const listed = await call('list_agents', {});
  t.equal(listed.isError, false, JSON.stringify(listed.body));
  t.equal(listed.body.agents.length, 6);
  t.same(listed.body.onDemandRuns, { perHour: 5, leftThisHour: 5 });
  t.same(listed.body, (await rest('GET', agents)).body);
});

t.test('update_agent changes what REST changes and answers the agent; unknown settings and agents keep the REST codes', async (t) => {
  const updated = await call('update_agent', { agentKey: 'ai_prompt', isActive: true, cadenceHours: 24, settings: { maxQuestions: 7 } });
  t.equal(updated.isError, false, JSON.stringify(updated.body));
  t.match(updated.body.agent, { agentKey: 'ai_prompt', isActive: true, cadenceHours: 24, settings: { maxQuestions: 7 } });
  const viaRest = (await rest('GET', agents)).body.agents.find((a: { agentKey: string }) => a.agentKey === 'ai_prompt');
  t.same(updated.body.agent, viaRest, 'REST reads the change at once');

  const unknownSetting = await call('update_agent', { agentKey: 'ai_prompt', settings: { nope: 1 } });
  const restUnknownSetting = await rest('PUT', `${agents}/ai_prompt`, { settings: { nope: 1 } });
  t.equal(unknownSetting.isError, true);
  t.equal(unknownSetting.body.error.code, restUnknownSetting.body.error.code, `the same code as REST (${restUnknownSetting.body.error.code})`);
  t.equal(unknownSetting.body.error.code, 'UNKNOWN_SETTING');
  // An unknown top-level key too: named, with REST's code, not a bare validation error.
  const unknownKey = await call('update_agent', { agentKey: 'ai_prompt', foo: 1 });
  const restUnknownKey = await rest('PUT', `${agents}/ai_prompt`, { foo: 1 });
  t.match(unknownKey.body.error, { code: 'UNKNOWN_SETTING', message: /"foo"/ });
  t.equal(restUnknownKey.body.error.code, 'UNKNOWN_SETTING');
  const unknownAgent = await call('update_agent', { agentKey: 'no_such_agent', isActive: true });
  t.equal(unknownAgent.body.error.code, 'AGENT_NOT_FOUND');
  t.equal((await rest('PUT', `${agents}/no_such_agent`, { isActive: true })).body.error.code, 'AGENT_NOT_FOUND');
  const badCadence = await call('update_agent', { agentKey: 'ai_prompt', cadenceHours: 0 });
  t.equal(badCadence.body.error.code, 'VALIDATION_ERROR');
});

t.test('run_agent on an inactive agent: AGENT_INACTIVE, as REST (409)', async (t) => {
  const refused = await call('run_agent', { agentKey: 'article_boost' });
  t.equal(refused.isError, true);
  t.equal(refused.body.error.code, 'AGENT_INACTIVE');
  t.match(refused.body.error.message, /article_boost/);
  const viaRest = await rest('POST', `${agents}/article_boost/run`);
  t.equal(viaRest.status, 409);
  t.equal(viaRest.body.error.code, 'AGENT_INACTIVE');
});

t.test('the on-demand run limit is one count for REST and MCP: 3 by REST and 2 by MCP, then the 6th is refused by both', async (t) => {
  const runIds: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const res = await rest('POST', `${agents}/ai_prompt/run`);
    t.equal(res.status, 202, `REST run ${i}`);
    runIds.push(res.body.run.id);
  }
  for (let i = 4; i <= 5; i++) {
    const answer = await call('run_agent', { agentKey: 'ai_prompt' });
    t.equal(answer.isError, false, `MCP run ${i}: ${JSON.stringify(answer.body)}`);
    t.match(answer.body.run, { agentKey: 'ai_prompt', trigger: 'on_demand', status: 'queued' });
    runIds.push(answer.body.run.id);
  }
  const sixthRest = await rest('POST', `${agents}/ai_prompt/run`);
  t.equal(sixthRest.status, 429, 'the 6th by REST');
  t.equal(sixthRest.body.error.code, 'RATE_LIMITED');
  const retryAfter = Number(sixthRest.retryAfter);
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, `Retry-After in seconds (${sixthRest.retryAfter})`);
  const sixthMcp = await call('run_agent', { agentKey: 'ai_prompt' });
  t.equal(sixthMcp.isError, true, 'the 6th by MCP');
  t.equal(sixthMcp.body.error.code, 'RATE_LIMITED');
  t.match(sixthMcp.body.error.message, /5 on-demand agent runs per hour per site \(REST and MCP together\)/);
  const mcpRetryAfter = sixthMcp.body.error.retryAfterSeconds;
  t.ok(Number.isInteger(mcpRetryAfter) && Math.abs(mcpRetryAfter - retryAfter) <= 1, `retryAfterSeconds as REST's Retry-After (${mcpRetryAfter})`);

  const listed = await call('list_agents', {});
  t.same(listed.body.onDemandRuns, { perHour: 5, leftThisHour: 0 });

  // list_agent_runs: the five runs, newest first, filters and the cursor as on REST.
  const runs = await call('list_agent_runs', {});
  t.same(runs.body.runs.map((r: { id: string }) => r.id), [...runIds].reverse());
  t.same(runs.body, (await rest('GET', `${agents}/runs`)).body);
  const page = await call('list_agent_runs', { limit: 2 });
  t.equal(page.body.hasMore, true);
  const next = await call('list_agent_runs', { limit: 2, cursor: page.body.nextCursor });
  t.same(next.body, (await rest('GET', `${agents}/runs?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`)).body);
  t.equal(next.body.runs[0].id, runs.body.runs[2].id, 'the cursor leads to the next page');
  t.equal((await call('list_agent_runs', { agentKey: 'article_boost' })).body.runs.length, 0, 'agentKey filter');
  t.equal((await call('list_agent_runs', { status: 'queued', queuedAfter: '2000-01-01T00:00:00+02:00' })).body.runs.length, 5, 'status and queuedAfter');
  t.equal((await call('list_agent_runs', { queuedBefore: '2000-01-01T00:00:00Z' })).body.runs.length, 0, 'queuedBefore');
  t.equal((await call('list_agent_runs', { status: 'nope' })).body.error.code, 'VALIDATION_ERROR');
});

t.test('the plan gate: a starter site gets PLAN_REQUIRED from every agent tool', async (t) => {
  const starter = await anotherSite(ctx.app.services, tenant.teamId, 'starter.example.test');
  await changeSiteSettings(ctx.app.services, { siteId: starter, changes: { plan: 'starter' } });
  await settle(ctx.app.services);
  const narrow = await obtainToken(ctx, { scope: 'agents:read agents:write', siteIds: [starter] });
  const starterClient = await connectWithToken(ctx.mcpUrl, narrow);
  t.teardown(() => starterClient.close());
  for (const [name, args] of [
    ['list_agents', {}],
    ['list_agent_runs', {}],
    ['update_agent', { agentKey: 'ai_prompt', isActive: true }],
    ['run_agent', { agentKey: 'ai_prompt' }],
    // Bad arguments too: REST checks the plan before it reads the body, and so does MCP.
    ['update_agent', { agentKey: 'ai_prompt', cadenceHours: 0 }],
    ['list_agent_runs', { status: 'bad' }],
  ] as const) {
    const answer = toolAnswer(await starterClient.callTool({ name, arguments: { siteId: starter, ...args } }));
    t.equal(answer.body.error?.code, 'PLAN_REQUIRED', `${name} ${JSON.stringify(args)}`);
  }
});

t.test('the same order of refusals as REST: the site, the agent, then the arguments', async (t) => {
  const badBody = { isActive: 'yes' };
  const unknownAgent = await call('update_agent', { agentKey: 'nope', ...badBody });
  t.equal(unknownAgent.body.error.code, (await rest('PUT', `${agents}/nope`, badBody)).body.error.code);
  t.equal(unknownAgent.body.error.code, 'AGENT_NOT_FOUND');
  const unknownSite = toolAnswer(await client.callTool({ name: 'update_agent', arguments: { siteId: '01ARZ3NDEKTSV4RRFFQ69G5FAV', agentKey: 'ai_prompt', ...badBody } }));
  t.equal(unknownSite.body.error.code, 'SITE_NOT_FOUND');
  const badSiteId = toolAnswer(await client.callTool({ name: 'list_agents', arguments: { siteId: 42 } }));
  t.match(badSiteId.body.error, { code: 'VALIDATION_ERROR', message: /^siteId: / });
});

t.test('sync_article creates, then updates, the article GET .../articles lists; html or text, exactly one', async (t) => {
  const url = 'https://example.test/blog/mcp-sync';
  const created = await call('sync_article', { url, title: 'Synced by MCP', html: '<p>First <a href="/about">about</a>.</p>', publishedAt: '2026-01-02T03:04:05+01:00' });
  t.equal(created.isError, false, JSON.stringify(created.body));
  t.equal(created.body.created, true);
  t.match(created.body.article, { url, title: 'Synced by MCP', format: 'html', publishedAt: '2026-01-02T02:04:05.000Z', text: /First about/ });
  const listed = await rest('GET', `/api/v1/sites/${siteId}/articles`);
  t.equal(listed.status, 200);
  t.same(listed.body.articles.map((a: { id: string; title: string }) => [a.id, a.title]), [[created.body.article.id, 'Synced by MCP']]);
  const one = await rest('GET', `/api/v1/sites/${siteId}/articles/${created.body.article.id}`);
  t.same(one.body.article, created.body.article, 'the tool answers the article as REST reads it');

  const updated = await call('sync_article', { url, title: 'Synced again', text: 'Now plain text.' });
  t.equal(updated.body.created, false, 'the same URL updates');
  t.equal(updated.body.article.id, created.body.article.id);
  const after = await rest('GET', `/api/v1/sites/${siteId}/articles`);
  t.same(after.body.articles.map((a: { title: string }) => a.title), ['Synced again']);

  const both = await call('sync_article', { url, title: 'x', html: '<p>a</p>', text: 'a' });
  t.equal(both.body.error.code, 'VALIDATION_ERROR');
  t.match(both.body.error.message, 'exactly one of html and text');
  t.equal((await call('sync_article', { url, title: 'x' })).body.error.code, 'VALIDATION_ERROR', 'neither');
  const offSite = await call('sync_article', { url: 'https://elsewhere.test/page', title: 'x', text: 'a' });
  const restOffSite = await rest('PUT', `/api/v1/sites/${siteId}/articles`, { url: 'https://elsewhere.test/page', title: 'x', text: 'a' });
  t.equal(offSite.body.error.code, restOffSite.body.error.code, `off the site's domain: the REST code (${restOffSite.body.error.code})`);
});
