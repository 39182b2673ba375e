import t from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { agentsStream } from '../../src/domain/agents.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import { getAgentSettings } from '../../src/readModels/agentSettings.ts';
import { anotherSite, expectError, keyWith } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork } from './helpers.ts';

const app = await startTestApp({ agentWork: testAgentWork() });
t.teardown(() => app.close());
const advanced = await createTenant(app.services, { plan: 'advanced' });
const pro = await createTenant(app.services, { plan: 'pro' });
const starter = await createTenant(app.services, { plan: 'starter' });

const list = (tenant = advanced, key = tenant.key) => app.fastify.inject({ url: agentsPath(tenant.siteId), headers: bearer(key) });
const put = (agentKey: string, payload: unknown, tenant = advanced, key = tenant.key) =>
  app.fastify.inject({ method: 'PUT', url: `${agentsPath(tenant.siteId)}/${agentKey}`, headers: bearer(key), payload: payload as object });

t.test('GET lists the six agents with templates, defaults, plan and no run yet', async (t) => {
  const res = await list();
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(body.agents.map((a: { agentKey: string }) => a.agentKey), ['article_creation', 'ai_prompt', 'article_boost', 'interlinking', 'site_performance', 'outreach']);
  t.same(body.agents.map((a: { template: string }) => a.template), [
    'Search Opportunity Agent', 'AI Opportunity Agent', 'Article Boost Agent', 'Interlinking Agent', 'Site Performance Agent', 'Outreach Agent',
  ]);
  for (const agent of body.agents) t.match(agent, { isActive: false, planAllows: true, cadenceHours: null, lastRun: null, updatedAt: null });
  const interlinking = body.agents[3];
  t.same(interlinking.settings, { maxLinksPerArticle: 3 });
  t.same(interlinking.defaults, { maxLinksPerArticle: 3 });
  const outreach = body.agents[5];
  t.same(outreach.settings, {
    autoReply: true, senderName: null, signature: null, tone: 'friendly', declineReplies: true,
    dailySendCap: 20, maxProspectsPerRun: 25, prospectCriteria: { keywords: [] }, pitchTemplate: 'Hello',
  });
  t.same(body.onDemandRuns, { perHour: 5, leftThisHour: 5 });
  t.same(body.credits, { enforced: false, balance: 0 });
});

t.test('PUT toggles and tunes one agent; every change is one AgentConfigured, an unchanged PUT none', async (t) => {
  const res = await put('interlinking', { isActive: true, cadenceHours: 24, settings: { maxLinksPerArticle: 5 } });
  t.equal(res.statusCode, 200);
  t.match(res.json().agent, { agentKey: 'interlinking', isActive: true, cadenceHours: 24, settings: { maxLinksPerArticle: 5 }, defaults: { maxLinksPerArticle: 3 } });
  const events = await app.services.events.readStream(agentsStream(advanced.siteId));
  t.same(events.map((e) => e.data), [
    { siteId: advanced.siteId, agentKey: 'interlinking', changes: { active: true, cadenceHours: 24, workSettings: { maxLinksPerArticle: 5 } }, configuredAt: events[0]!.data && (events[0]!.data as { configuredAt: string }).configuredAt },
  ]);
  t.equal((await put('interlinking', { isActive: true, settings: { maxLinksPerArticle: 5 } })).statusCode, 200);
  t.equal((await app.services.events.readStream(agentsStream(advanced.siteId))).length, 1, 'nothing changed, nothing recorded');

  const off = await put('interlinking', { cadenceHours: null });
  t.match(off.json().agent, { isActive: true, cadenceHours: null, settings: { maxLinksPerArticle: 5 } }, 'other settings stay');
});

t.test("outreach: the reply settings stay where the Outreach Agent reads them; discovery limits are work settings", async (t) => {
  const res = await put('outreach', {
    isActive: true,
    settings: { tone: 'formal', senderName: '  Ada  ', signature: '', dailySendCap: 5, maxProspectsPerRun: 10, prospectCriteria: { keywords: ['compost'] } },
  });
  t.equal(res.statusCode, 200);
  t.same(res.json().agent.settings, {
    autoReply: true, tone: 'formal', senderName: 'Ada', signature: null, declineReplies: true,
    dailySendCap: 5, maxProspectsPerRun: 10, prospectCriteria: { keywords: ['compost'] }, pitchTemplate: 'Hello',
  });
  const doc = await getAgentSettings(app.services.readModels, advanced.siteId, 'outreach');
  t.match(doc, { active: true, tone: 'formal', senderName: 'Ada', workSettings: { dailySendCap: 5, maxProspectsPerRun: 10 } });
  // The From name and the sign-off of every reply hold text: a NUL or an unpaired surrogate is refused, and nothing changes.
  // The From name and the keywords are one line each (the signature may have several).
  for (const settings of [{ senderName: 'A\u0000da' }, { signature: 'Ada \ud800' }, { senderName: 'Ada\r\nBcc: x@y.example' }, { senderName: 'Ana \u202e gnp' }, { prospectCriteria: { keywords: ['x\u0000\ud800y'] } }, { prospectCriteria: { keywords: ['two\nlines'] } }]) {
    const refused = await put('outreach', { settings });
    t.equal(refused.statusCode, 400, JSON.stringify(settings));
    t.equal(refused.json().error.code, 'VALIDATION_ERROR');
  }
  t.match(await getAgentSettings(app.services.readModels, advanced.siteId, 'outreach'), { senderName: 'Ada', signature: null, workSettings: { prospectCriteria: { keywords: ['compost'] } } });
  t.equal((await put('outreach', { settings: { signature: 'Ada\nThe Compost Blog' } })).statusCode, 200, 'a signature of two lines');
  // Right-to-left text with a Latin term in isolates is a keyword like any other (only names others must trust refuse them).
  const rtl = await put('outreach', { settings: { prospectCriteria: { keywords: ['قهوة \u2066SEO\u2069'] } } });
  t.equal(rtl.statusCode, 200, rtl.body);
  t.equal((await put('outreach', { settings: { dailySendCap: 4 } })).statusCode, 200, 'and a later change still validates the stored keywords');
});

t.test('outreach: the per-run limit that was also in prospectCriteria is one setting; old events and bodies carrying it still work', async (t) => {
  const tenant = await createTenant(app.services, { plan: 'advanced' });
  const outreachOf = async () => (await list(tenant)).json().agents[5].settings;
  // An AgentConfigured as the service wrote it before: the limit inside the criteria, and a lower one beside them.
  await app.services.events.append(
    agentsStream(tenant.siteId),
    [{ type: 'AgentConfigured', data: { siteId: tenant.siteId, agentKey: 'outreach', changes: { active: true, workSettings: { prospectCriteria: { keywords: ['compost'], maxProspectsPerRun: 8 } } }, configuredAt: '2026-01-15T11:00:00.000Z' } }],
    'any',
  );
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  t.match(await outreachOf(), { maxProspectsPerRun: 8, prospectCriteria: { keywords: ['compost'] } }, 'the old event loads, its limit folded in');
  t.notOk('maxProspectsPerRun' in (await outreachOf()).prospectCriteria);

  const raised = await put('outreach', { settings: { maxProspectsPerRun: 40 } }, tenant);
  t.equal(raised.statusCode, 200);
  t.match(raised.json().agent.settings, { maxProspectsPerRun: 40, prospectCriteria: { keywords: ['compost'] } }, 'the one setting decides from now on');
  const last = (await app.services.events.readStream(agentsStream(tenant.siteId))).at(-1)!.data as { changes: { workSettings: Record<string, unknown> } };
  t.same(last.changes.workSettings, { maxProspectsPerRun: 40, prospectCriteria: { keywords: ['compost'] } }, 'the new event rewrites the legacy criteria');

  const legacyBody = await put('outreach', { settings: { prospectCriteria: { keywords: ['mulch'], maxProspectsPerRun: 12 } } }, tenant);
  t.equal(legacyBody.statusCode, 200, 'a body with the old field is accepted');
  t.match(legacyBody.json().agent.settings, { maxProspectsPerRun: 12, prospectCriteria: { keywords: ['mulch'] } }, 'folded: the lower of it and the current limit');
  const again = await put('outreach', { settings: { prospectCriteria: { keywords: ['mulch'], maxProspectsPerRun: 300 } } }, tenant);
  t.match(again.json().agent.settings, { maxProspectsPerRun: 12 }, 'the old field only ever lowered the limit, and still does');
  // From an audit: the old field alone left `prospectCriteria: {}`, which replaced the stored keywords (every prospect then fitted).
  const alone = await put('outreach', { settings: { prospectCriteria: { maxProspectsPerRun: 2 } } }, tenant);
  t.equal(alone.statusCode, 200);
  t.match(alone.json().agent.settings, { maxProspectsPerRun: 2, prospectCriteria: { keywords: ['mulch'] } }, 'the old field alone keeps the keywords');
  expectError(t, await put('outreach', { settings: { prospectCriteria: { keywords: [], maxProspectsPerRun: 0 } } }, tenant), 400, 'VALIDATION_ERROR', 'a bad old field');
  expectError(t, await put('outreach', { settings: { maxProspectsPerRun: 201 } }, tenant), 400, 'VALIDATION_ERROR', 'above the bound');
  for (const bad of [1000, 'abc']) {
    const both = await put('outreach', { settings: { maxProspectsPerRun: bad, prospectCriteria: { maxProspectsPerRun: 5 } } }, tenant);
    expectError(t, both, 400, 'VALIDATION_ERROR', `a bad limit (${bad}) beside the old field is not hidden by the fold`);
    t.match(both.json().error.message, /settings\.maxProspectsPerRun/);
  }
  t.equal((await put('outreach', { settings: { signature: 's'.repeat(1000) } }, tenant)).statusCode, 200, 'a signature at its bound');
  expectError(t, await put('outreach', { settings: { signature: 's'.repeat(1001) } }, tenant), 400, 'VALIDATION_ERROR', 'a signature above it (docs, CLI and the work agree: 1000)');  t.equal((await put('outreach', { settings: { dailySendCap: 500 } }, tenant)).statusCode, 200, 'the daily cap at its bound');
  expectError(t, await put('outreach', { settings: { dailySendCap: 501 } }, tenant), 400, 'VALIDATION_ERROR', 'the daily cap above its bound (the one the work applies)');
});

t.test('bad bodies: UNKNOWN_SETTING names the key, VALIDATION_ERROR the value, AGENT_NOT_FOUND the agent', async (t) => {
  const unknown: Array<[string, string, object]> = [
    ['interlinking', 'top-level key', { isActive: true, colour: 'red' }],
    ['interlinking', 'settings key', { settings: { maxLinks: 2 } }],
    ['interlinking', "outreach's keys on another agent", { settings: { tone: 'formal' } }],
    ['article_creation', "another agent's key", { settings: { maxLinksPerArticle: 2 } }],
    ['outreach', 'a key nested in a setting (it was VALIDATION_ERROR)', { settings: { prospectCriteria: { keywords: ['x'], bogus: 1 } } }],
  ];
  for (const [key, what, payload] of unknown) {
    const res = await put(key, payload);
    expectError(t, res, 400, 'UNKNOWN_SETTING', what);
  }
  t.match((await put('interlinking', { settings: { maxLinks: 2 } })).json().error.message, /maxLinks/);
  t.match((await put('outreach', { settings: { prospectCriteria: { bogus: 1 } } })).json().error.message, /"prospectCriteria\.bogus"/, 'named with its path');
  const many = (await put('interlinking', { settings: Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`k${i}${'x'.repeat(90)}`, 1])) })).json().error.message as string;
  t.match(many, /\(and 2990 more\)\.$/, 'ten keys named, then how many more');
  t.ok(many.length < 1_300, `${many.length} characters`);

  const invalid: Array<[string, string, unknown]> = [
    ['interlinking', 'isActive not a boolean', { isActive: 'yes' }],
    ['interlinking', 'cadence 0', { cadenceHours: 0 }],
    ['interlinking', 'cadence over a week', { cadenceHours: 169 }],
    ['interlinking', 'cadence not whole', { cadenceHours: 1.5 }],
    ['interlinking', 'work setting out of range', { settings: { maxLinksPerArticle: 0 } }],
    ['outreach', 'unknown tone', { settings: { tone: 'rude' } }],
    ['outreach', 'send cap negative', { settings: { dailySendCap: -1 } }],
    ['article_creation', 'keywords not strings', { settings: { seedKeywords: [1] } }],
    ['interlinking', 'settings not an object', { settings: [1] }],
    ['interlinking', 'not an object', [1, 2]],
  ];
  for (const [key, what, payload] of invalid) expectError(t, await put(key, payload), 400, 'VALIDATION_ERROR', what);
  t.match((await put('interlinking', { settings: { maxLinksPerArticle: 0 } })).json().error.message, /settings\.maxLinksPerArticle/);

  expectError(t, await put('seo_wizard', { isActive: true }), 404, 'AGENT_NOT_FOUND', 'unknown agent');
  expectError(t, await put('runs', { isActive: true }), 404, 'AGENT_NOT_FOUND', '"runs" is not an agent');
  expectError(t, await app.fastify.inject({ method: 'POST', url: `${agentsPath(advanced.siteId)}/seo_wizard/run`, headers: bearer(advanced.key) }), 404, 'AGENT_NOT_FOUND', 'run of an unknown agent');
});

t.test('plans: a starter site gets PLAN_REQUIRED everywhere; Pro has every agent but outreach', async (t) => {
  const calls = (tenant: typeof starter) => [
    () => list(tenant),
    () => app.fastify.inject({ url: `${agentsPath(tenant.siteId)}/runs`, headers: bearer(tenant.key) }),
    () => put('interlinking', { isActive: true }, tenant),
    () => app.fastify.inject({ method: 'POST', url: `${agentsPath(tenant.siteId)}/interlinking/run`, headers: bearer(tenant.key) }),
  ];
  for (const call of calls(starter)) {
    const res = await call();
    expectError(t, res, 403, 'PLAN_REQUIRED', 'starter');
    t.match(res.json().error.message, /Pro or Advanced/);
  }
  const listed = (await list(pro)).json();
  t.same(listed.agents.map((a: { planAllows: boolean }) => a.planAllows), [true, true, true, true, true, false]);
  t.equal((await put('interlinking', { isActive: true }, pro)).statusCode, 200);
  const refused = await put('outreach', { isActive: true }, pro);
  expectError(t, refused, 403, 'PLAN_REQUIRED', 'outreach on Pro');
  t.match(refused.json().error.message, /Advanced/);
  expectError(t, await app.fastify.inject({ method: 'POST', url: `${agentsPath(pro.siteId)}/outreach/run`, headers: bearer(pro.key) }), 403, 'PLAN_REQUIRED', 'outreach run on Pro');
});

t.test('an Outreach Agent run on a site whose sending domain is not verified is refused when asked, not queued to fail and counted', async (t) => {
  const site = await createTenant(app.services, { plan: 'advanced', domain: 'unverified.example' });
  t.equal((await put('outreach', { isActive: true }, site)).statusCode, 200);
  const run = () => app.fastify.inject({ method: 'POST', url: `${agentsPath(site.siteId)}/outreach/run`, headers: bearer(site.key) });
  const refused = await run();
  expectError(t, refused, 409, 'SENDING_DOMAIN_UNVERIFIED', 'unverified');
  t.match(refused.json().error.message, /verify its sending domain first/);
  t.match((await list(site)).json().onDemandRuns, { leftThisHour: 5 }, 'not counted');
  const { position } = await changeSiteSettings(app.services, { siteId: site.siteId, changes: { sendingDomainVerified: true } });
  await app.services.projections.waitFor(position!, 5_000);
  t.equal((await run()).statusCode, 202, 'verified: queued');
});

t.test('scopes and tenancy on every agent route', async (t) => {
  const routes: Array<{ method: 'GET' | 'PUT' | 'POST'; path: (s: string) => string; scope: Scope; payload?: object }> = [
    { method: 'GET', path: (s) => agentsPath(s), scope: 'agents:read' },
    { method: 'GET', path: (s) => `${agentsPath(s)}/runs`, scope: 'agents:read' },
    { method: 'PUT', path: (s) => `${agentsPath(s)}/article_boost`, scope: 'agents:write', payload: { isActive: false } },
    { method: 'POST', path: (s) => `${agentsPath(s)}/article_boost/run`, scope: 'agents:write' },
  ];
  const all: Scope[] = ['analytics:read', 'opportunities:read', 'articles:read', 'articles:write', 'agents:read', 'agents:write', 'inbox:read', 'inbox:write', 'webhooks:read', 'webhooks:write'];
  const second = await anotherSite(app.services, advanced.teamId, 'agents-second.example.test');
  const restricted = await keyWith(app.services, advanced.teamId, ['agents:read', 'agents:write'], second);
  for (const route of routes) {
    const call = (siteId: string, key: string) =>
      app.fastify.inject({ method: route.method, url: route.path(siteId), headers: bearer(key), ...(route.payload ? { payload: route.payload } : {}) });
    const name = `${route.method} ${route.path(':site')}`;
    const without = await keyWith(app.services, advanced.teamId, all.filter((s) => s !== route.scope));
    expectError(t, await call(advanced.siteId, without.key), 403, 'INSUFFICIENT_SCOPE', `${name} without ${route.scope}`);
    expectError(t, await call(advanced.siteId, pro.key), 404, 'SITE_NOT_FOUND', `${name} another team's key`);
    expectError(t, await call(advanced.siteId, restricted.key), 404, 'SITE_NOT_FOUND', `${name} key restricted to another site`);
    expectError(t, await call(advanced.siteId, 'svc_' + 'f'.repeat(64)), 401, 'UNAUTHORIZED', `${name} unknown key`);
  }
});
