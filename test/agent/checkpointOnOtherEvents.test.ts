/**
 * The Outreach Agent worker and the agent runner follow the whole log, most of which (webhook
 * deliveries' records, other teams' work) is not theirs. A stream of such events does not cost
 * them a read-model commit per append: their checkpoints move in memory and are stored when the log
 * goes idle (or every few seconds), and still reach the head.
 */
import t from 'tap';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { AGENT_WORKER } from '../../src/processors/agent/outreachAgentWorker.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { agentCheckpointReaches, startAgentHarness } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const AGENT_RUNNER = 'agentRunner';

t.test("a run of other events: no read-model commit per append for the agent's followers, and their checkpoints still reach the head", async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const commits = new Map<string, number>();
  const readModels: ReadModelStore = Object.create(s.readModels);
  readModels.applyBatch = (projection, ...rest) => {
    commits.set(projection, (commits.get(projection) ?? 0) + 1);
    return s.readModels.applyBatch(projection, ...rest);
  };
  a.agent = await startAgentWorker({ ...s, readModels }, { error: () => {}, warn: () => {} });
  const runner = await startAgentRunner({ ...s, readModels }, { error: () => {}, warn: () => {} });
  t.teardown(() => runner.stop());
  const runnerCheckpoint = async () => (await s.readModels.getCheckpoint(AGENT_RUNNER))?.position ?? -1n;
  await agentCheckpointReaches(s.readModels, await s.events.headPosition());

  commits.clear();
  const OTHER = 40;
  for (let i = 0; i < OTHER; i++) {
    const id = `other-${i}`;
    await s.events.append(`subscription-${id}`, [{ type: 'SubscriptionDeleted', data: { subscriptionId: id, siteId: id, deletedAt: '2026-01-01T00:00:00.000Z' } }], 'any');
    await sleep(10);
  }
  const head = await s.events.headPosition();
  await agentCheckpointReaches(s.readModels, head);
  for (let i = 0; i < 200 && (await runnerCheckpoint()) < head; i++) await sleep(25);
  t.equal(await runnerCheckpoint(), head, "the runner's stored checkpoint reached the head once the log went idle");
  const worker = commits.get(AGENT_WORKER) ?? 0;
  const runnerCommits = commits.get(AGENT_RUNNER) ?? 0;
  t.comment(`commits for ${OTHER} appends of other events: agent worker ${worker}, agent runner ${runnerCommits}`);
  // Before: one per page read, about one per append here. Now: the idle store, and at most one more per 5 s.
  t.ok(worker <= 3, `agent worker: ${worker} commits`);
  t.ok(runnerCommits <= 3, `agent runner: ${runnerCommits} commits`);
});

t.test("the Outreach Agent worker stores at stop where it has read past other events (as the log's other followers do)", async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const agent = await startAgentWorker(s, { error: () => {}, warn: () => {} });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : agent.stop()));
  await agentCheckpointReaches(s.readModels, await s.events.headPosition());
  const stored = async () => (await s.readModels.getCheckpoint(AGENT_WORKER))?.position ?? -1n;
  const other = (id: string) =>
    s.events.append(`subscription-${id}`, [{ type: 'SubscriptionDeleted', data: { subscriptionId: id, siteId: id, deletedAt: '2026-01-01T00:00:00.000Z' } }], 'any');

  // The first page after the start is stored (no store for 5 s); the next ones are not.
  const first = await other('at-stop-first');
  t.ok(await agent.worker.waitForPosition(first.position, 5_000));
  for (let i = 0; i < 5; i++) await other(`at-stop-${i}`);
  const head = await s.events.headPosition();
  const lastAppendAt = Date.now();
  t.ok(await agent.worker.waitForPosition(head, 5_000), 'read up to the head');
  // Stopped at once: well inside the second after which an idle log stores it anyway.
  const storedBeforeStop = await stored();
  const elapsed = Date.now() - lastAppendAt;
  await agent.stop();
  stopped = true;
  if (storedBeforeStop === head && elapsed > 900) t.comment(`the idle store came first (${elapsed} ms after the last append, on a loaded machine): the stop had nothing left to store`);
  else t.ok(storedBeforeStop < head, `passed over in memory only until the stop (stored ${storedBeforeStop}, head ${head})`);
  t.equal(await stored(), head, 'stored at stop');
});

/** Starts and stops of the worker called without waiting take effect in the order they were called. */
for (const [calls, running] of [
  [['stop', 'start'], true],
  [['stop', 'start', 'stop'], false],
  [['stop', 'start', 'stop', 'start'], true],
] as const) {
  t.test(`${calls.join(', ')} called at once: ${running ? 'running' : 'stopped'} after`, async (t) => {
    const a = await startAgentHarness({ startAgent: false });
    t.teardown(() => a.close());
    const s = a.h.app.services;
    const agent = await startAgentWorker(s, { error: () => {}, warn: () => {} });
    t.teardown(() => agent.stop());
    await agentCheckpointReaches(s.readModels, await s.events.headPosition());
    await Promise.all(calls.map((call) => agent.worker[call]()));
    const id = `after-${calls.join('-')}`;
    const { position } = await s.events.append(`subscription-${id}`, [{ type: 'SubscriptionDeleted', data: { subscriptionId: id, siteId: id, deletedAt: '2026-01-01T00:00:00.000Z' } }], 'any');
    t.equal(await agent.worker.waitForPosition(position, running ? 5_000 : 1_500), running, running ? 'it reads what was appended since' : 'it reads nothing more');
  });
}
