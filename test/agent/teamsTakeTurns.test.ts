import t from 'tap';
import { createTenant } from '../helpers/testApp.ts';
import { ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { completion, fakeOpenAi, isTriageCall } from '../helpers/fakeOpenAi.ts';
import { startAgentHarness, waitFor } from './helpers.ts';

/**
 * One team's burst of pitches does not hold another team's behind all of it: the agent's dispatches
 * of a page of the log are triaged with the teams taking turns (from an audit: team B's pitch waited
 * 12 s behind team A's 200). One lane (AGENT_CONCURRENCY=1) makes the order visible.
 */
t.test("another team's pitch is triaged second, not after the whole burst", async (t) => {
  const a = await startAgentHarness({ env: { AGENT_CONCURRENCY: '1' }, startAgent: false });
  t.teardown(() => a.close());
  const { services, fastify } = a.h.app;
  const b = await createTenant(services, { plan: 'advanced', domain: 'b.example', sendingDomainVerified: true });
  await makeAgentReady(services, b.siteId);
  for (let i = 0; i < 5; i++) await a.pitch({ from: `p${i}@prospect.test`, messageId: `<a-${i}@prospect.test>` });
  const fromB = (await ingest(fastify, b, { ...PITCH, from: 'q@other.test', messageId: '<b-0@other.test>' })).json().conversationIds[0];
  await a.startAgent();
  await a.waitForEvent(fromB, 'AgentTriaged', 20_000);
  for (;;) {
    const triaged = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'AgentTriaged');
    if (triaged.length >= 6) {
      const order = triaged.map((e) => (e.data as { teamId: string }).teamId);
      t.equal(order.indexOf(b.teamId), 1, `team B's pitch is the second triaged (order: ${order.map((id) => (id === b.teamId ? 'B' : 'A')).join('')})`);
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
});

/**
 * Across pages too: another team's pitch that arrives while the agent is working through one
 * team's burst (so it is in a later page of the log) takes the next turn, not the place after the
 * whole burst. The model takes 300 ms a triage (the first 1.5 s), so the burst is 3.6 s of lane time.
 */
t.test("another team's pitch arriving during a burst's triage is taken at the next turn", async (t) => {
  const model = await fakeOpenAi(t);
  model.set((_req, body) => {
    if (!isTriageCall(body)) return { status: 500, json: { error: { message: 'only triage here' } } };
    // The burst's first triage takes long enough for team B's pitch to be ingested and read meanwhile.
    const first = model.seen.filter((call) => isTriageCall(call.body)).length === 1;
    return { status: 200, json: completion(JSON.stringify({ outcome: 'needs_human', reasons: ['test'] })), delayMs: first ? 1_500 : 300 };
  });
  const a = await startAgentHarness({
    env: { AGENT_CONCURRENCY: '1', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL, OPENAI_TIMEOUT_MS: '20000' },
    startAgent: false,
  });
  t.teardown(() => a.close());
  const { services, fastify } = a.h.app;
  const b = await createTenant(services, { plan: 'advanced', domain: 'b.example', sendingDomainVerified: true });
  await makeAgentReady(services, b.siteId);
  for (let i = 0; i < 8; i++) await a.pitch({ from: `p${i}@prospect.test`, messageId: `<burst-${i}@prospect.test>` });
  const burstEnd = await services.events.headPosition();
  await a.startAgent();
  // The burst's first triage is under way: team B's pitch comes in a page of its own.
  await waitFor('the first triage call', async () => (model.seen.some((call) => isTriageCall(call.body)) ? true : undefined), 10_000);
  const fromB = (await ingest(fastify, b, { ...PITCH, from: 'q@other.test', messageId: '<late-b@other.test>' })).json().conversationIds[0];
  const dispatchOfB = (await services.events.readAll({ after: burstEnd, limit: 1_000 })).find((e) => e.type === 'AgentDispatchRequested');
  t.ok(dispatchOfB && dispatchOfB.position > burstEnd, "team B's dispatch is after the burst in the log");
  await a.waitForEvent(fromB, 'AgentTriaged', 20_000);
  const order = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'AgentTriaged').map((e) => ((e.data as { teamId: string }).teamId === b.teamId ? 'B' : 'A'));
  t.equal(order.indexOf('B'), 1, `team B's pitch is the second triaged, right after the one under way (order: ${order.join('')})`);
  t.ok(order.length < 9, 'before the whole burst was triaged');
});
