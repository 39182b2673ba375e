import t from 'tap';
import type { EventStore, ReadAllOptions } from '../../src/ports/eventStore.ts';
import { backgroundEventStore } from '../../src/processors/backgroundEventStore.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { startTarpit } from '../helpers/tarpit.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { apiCall } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEASE_MS = 30_000;

/**
 * A runner stopped while a queued run waits for its one slot leaves that run to the next start: its
 * checkpoint is not stored past it. Before, the page was stored as acted on, and the run waited for a
 * sweep, AGENT_RUN_LEASE_MS after it was queued.
 */
t.test('a run waiting for a slot when the runner stops is taken at the next start, not after its lease', async (t) => {
  const { port } = await startTarpit(t);
  const app = await startTestApp({
    env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', AGENT_RUN_CONCURRENCY: '1', AGENT_RUN_LEASE_MS: String(LEASE_MS), AGENT_RUN_MAX_MS: '60000' },
  });
  t.teardown(() => app.close());
  const a = await createTenant(app.services, { plan: 'advanced', domain: 'a.example', sendingDomainVerified: true });
  const b = await createTenant(app.services, { plan: 'advanced', domain: 'b.example' });
  const call = apiCall(app);
  // Team A's run holds the one slot (its prospect never answers); team B's waits for it.
  await call(a.key, 'POST', `/api/v1/sites/${a.siteId}/agents/outreach/prospects`, { prospects: [{ url: `https://127.0.0.1:${port}/p0` }] });
  await call(a.key, 'PUT', `/api/v1/sites/${a.siteId}/agents/outreach`, { isActive: true });
  await call(b.key, 'PUT', `/api/v1/sites/${b.siteId}/articles`, { url: 'https://b.example/worm-bins', title: 'Worm bins', text: 'Worm bins turn kitchen scraps into compost.' });
  await call(b.key, 'PUT', `/api/v1/sites/${b.siteId}/agents/interlinking`, { isActive: true });

  // The first runner's reads of the log: the stop below comes once it has read team B's queued run.
  const real = backgroundEventStore(app.services.events);
  let readUpTo = -1n;
  const events: EventStore = Object.assign(Object.create(real) as EventStore, {
    offThreadAppends: undefined,
    async readAll(options?: ReadAllOptions) {
      const page = await real.readAll(options);
      for (const e of page) if (e.position > readUpTo) readUpTo = e.position;
      return page;
    },
  });
  const first = await startAgentRunner({ ...app.services, events }, undefined, { workerId: 'runner-1' });
  let firstStopped = false;
  t.teardown(() => (firstStopped ? undefined : first.stop()));
  const a1 = (await call(a.key, 'POST', `/api/v1/sites/${a.siteId}/agents/outreach/run`)).run.id as string;
  const status = async (id: string) => {
    await settle(app.services);
    return (await getAgentRun(app.services.readModels, id))?.status;
  };
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await status(a1)) !== 'running'; ) await sleep(50);
  t.equal(await status(a1), 'running', "team A's run holds the slot");
  const b1 = (await call(b.key, 'POST', `/api/v1/sites/${b.siteId}/agents/interlinking/run`)).run.id as string;
  const queued = (await app.services.events.readAll({ types: ['AgentRunQueued'] })).find((e) => (e.data as { runId?: string }).runId === b1)!;
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && readUpTo < queued.position; ) await sleep(20);
  t.ok(readUpTo >= queued.position, "the runner read team B's queued run");
  await sleep(100); // and went on to wait for the slot
  t.equal(await status(b1), 'queued', "team B's run waits for the slot");
  await first.stop();
  firstStopped = true;
  t.equal(await status(b1), 'queued', 'still queued after the stop');

  const restartedAt = Date.now();
  const second = await startAgentRunner(app.services, undefined, { workerId: 'runner-2' });
  t.teardown(() => second.stop());
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await status(b1)) !== 'succeeded'; ) await sleep(100);
  t.equal(await status(b1), 'succeeded', `taken at the next start, within 10 s (the lease is ${LEASE_MS / 1000} s)`);
  t.ok(Date.now() - restartedAt < LEASE_MS / 2, 'not by the sweep');
});
