import t from 'tap';
import { createTenant } from '../helpers/testApp.ts';
import { ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { startAgentHarness } from './helpers.ts';

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
