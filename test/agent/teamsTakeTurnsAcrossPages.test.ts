import t from 'tap';
import { createTenant } from '../helpers/testApp.ts';
import { completion, fakeOpenAi, userPrompt } from '../helpers/fakeOpenAi.ts';
import { ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { startAgentHarness } from './helpers.ts';

/**
 * A team's burst with slow model calls does not hold another team's pitch that arrives while the
 * burst is being triaged (a later page of the log) behind all of the burst: a step takes up new
 * conversations for a bounded time and carries the rest to the next step, where the new pitch takes
 * its turn. (Before, a page's triage was awaited whole: 40 pitches at 4 s a call held another
 * team's pitch ~7 s with 16 lanes; here 12 at 1.5 s with 2 lanes, ~9 s.)
 */
t.test("another team's pitch arriving during a slow burst is triaged before the burst is through", async (t) => {
  const model = await fakeOpenAi(t);
  model.set((_req, body) => {
    const format = body.response_format as { json_schema?: { name?: string } } | undefined;
    if (format?.json_schema?.name !== 'triage_decision') return { status: 500, json: { error: { message: 'only triage here' } } };
    const fromB = userPrompt(body).includes('Recipient site: b.example');
    return { status: 200, json: completion(JSON.stringify({ outcome: 'needs_human', reasons: ['test'] })), delayMs: fromB ? 0 : 1_500 };
  });
  const a = await startAgentHarness({
    env: { AGENT_CONCURRENCY: '2', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL, OPENAI_TIMEOUT_MS: '20000' },
    startAgent: false,
  });
  t.teardown(() => a.close());
  const { services, fastify } = a.h.app;
  const b = await createTenant(services, { plan: 'advanced', domain: 'b.example', sendingDomainVerified: true });
  await makeAgentReady(services, b.siteId);
  for (let i = 0; i < 12; i++) await a.pitch({ from: `p${i}@prospect.test`, messageId: `<a-${i}@prospect.test>` });
  await a.startAgent();
  const triageCalls = () => model.seen.filter((s) => (s.body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === 'triage_decision').length;
  while (triageCalls() === 0) await new Promise((r) => setTimeout(r, 10));
  // The burst's page is being triaged: team B's pitch lands in the next page.
  const fromB = (await ingest(fastify, b, { ...PITCH, from: 'q@other.test', messageId: '<b-0@other.test>' })).json().conversationIds[0];
  await a.waitForEvent(fromB, 'AgentTriaged', 30_000);
  const triagedA = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'AgentTriaged' && (e.data as { teamId: string }).teamId !== b.teamId).length;
  t.ok(triagedA <= 6, `team B's pitch was triaged after ${triagedA} of team A's 12 (all 12 when the page was awaited whole)`);
  // Stopped with some of the burst carried: they are stored with the checkpoint, and a new worker takes them up.
  await a.agent!.stop();
  const carried = await services.readModels.find<{ id: string; carried?: boolean }>('outreachAgentDeferredDispatches', {});
  t.ok(carried.length > 0 && carried.every((d) => d.carried === true), `stopped with ${carried.length} dispatches carried, stored`);
  await a.startAgent();
  t.ok(await a.agent!.worker.waitForPosition(await services.events.headPosition(), 30_000), 'the rest of the burst is triaged too, after a restart');
  t.same(await services.readModels.find('outreachAgentDeferredDispatches', {}), [], 'nothing left carried');
  const all = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'AgentTriaged');
  t.equal(all.length, 13, 'every pitch triaged once');
  // Each decision is stamped when it is recorded, after its 1.5 s model call, not when it was taken up.
  const ingestedAt = new Map((await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').map((e) => [(e.data as { messageId: string }).messageId, (e.data as { occurredAt: number }).occurredAt]));
  const slow = all.filter((e) => (e.data as { teamId: string }).teamId !== b.teamId).map((e) => e.data as { inboundMessageId: string; occurredAt: number });
  t.ok(slow.every((d) => d.occurredAt - ingestedAt.get(d.inboundMessageId)! >= 1_500), "team A's decisions are stamped after their model calls");
});
