/**
 * Outreach Agent throughput: dispatches triaged and replied per second, against the same number of
 * bare `OutboxMailer.send` calls of the very same mails in the same run.
 *
 * - agent: N pitches are ingested through the REST app (fastify inject, the real route: auth,
 *   extraction with the offline extractor, one durable append each) on an agent-ready site while
 *   the agent is stopped, so N `AgentDispatchRequested` wait in the log. The agent then starts with
 *   the embedded outbox mailer (outbox.sqlite in the DATA_DIR, synchronous=FULL) and the clock runs
 *   until its checkpoint passed the last dispatch and its sender is idle (`waitForPosition`). Per
 *   dispatch it does what it always does: read the ingestion's events, the site, agent settings and
 *   suppression list, the conversation's stream; triage (offline classifier); draft (template);
 *   one durable append (AgentTriaged, ReplyDrafted, ReplySendAttempted); the outbox write; one
 *   durable append (ReplySent, ConversationStatusChanged). The read-model projections run in the same
 *   process, as with `npm start`.
 * - baseline: N bare `OutboxMailer.send` calls into a fresh outbox file each round, with
 *   AGENT_CONCURRENCY in flight, before the agent (the template drafter's reply to each pitch) and
 *   after it (the very mails the agent sent, from its ReplyDrafted events); the mean of the two is
 *   the ratio's denominator. A sequential round (one in flight) after the agent is reported too.
 *
 * Ratio: agent dispatches/s ÷ bare concurrent sends/s. Target ≥ 66.7% (the agent's overhead at most
 * 50% over the bare sends: 1 / 1.5).
 */
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { OutboxMailer } from '../src/adapters/mail/outboxMailer.ts';
import type { OutgoingMail } from '../src/ports/mailer.ts';
import { startAgentWorker } from '../src/processors/agent/startAgentWorker.ts';
import { bareSends, cpuMicros, expectedReply, ingestPitches, mailOfDraft, startAgentBenchService } from './agentSetup.ts';
import { profileWindow } from './profileWindow.ts';
import type { BenchResult } from './types.ts';

const N = Number(process.env.BENCH_AGENT_N ?? 2_000);

const meanText = (mails: OutgoingMail[]) => Math.round(mails.reduce((sum, m) => sum + m.text.length, 0) / Math.max(1, mails.length));

export default async function run(): Promise<BenchResult> {
  const s = await startAgentBenchService('bench-agent-throughput-');
  const concurrency = s.config.AGENT_CONCURRENCY;
  try {
    let round = 0;
    const bare = (mails: OutgoingMail[], inFlight: number) => bareSends(join(s.dir, `bare-${round++}.sqlite`), mails, inFlight);

    // ── load: N ingestions through the REST route, agent stopped
    const { seconds: ingestSeconds, failed, head, dispatches } = await ingestPitches(s, N);

    // ── baseline before the agent (the machine's speed drifts: it runs before and after, the ratio uses the mean)
    const expected = await Promise.all(Array.from({ length: N }, (_, i) => expectedReply(i)));
    await bare(expected, concurrency); // warm-up (JIT, nodemailer), not counted
    const concurrentBefore = await bare(expected, concurrency);

    // ── the agent, with the embedded outbox
    const mailer = OutboxMailer.inDataDir(s.dir);
    const agentStart = performance.now();
    const agentCpu = process.cpuUsage();
    const stopProfile = await profileWindow('agentThroughput-agent');
    const agent = await startAgentWorker(s.services, undefined, { mailer });
    const complete = await agent.worker.waitForPosition(head, 300_000);
    const agentSeconds = (performance.now() - agentStart) / 1000;
    const agentCpuUs = cpuMicros(process.cpuUsage(agentCpu));
    await stopProfile();
    await agent.stop();
    const projectionsStart = performance.now();
    await s.services.projections.waitFor(await s.services.events.headPosition(), 120_000);
    const projectionsLagSeconds = (performance.now() - projectionsStart) / 1000;

    const after = await s.services.events.readAll({ after: head, limit: 10_000_000 });
    const replySent = after.filter((e) => e.type === 'ReplySent').length;
    const mails: OutgoingMail[] = after.filter((e) => e.type === 'ReplyDrafted').map(mailOfDraft);
    const outboxCount = mailer.listOutbox({ limit: 10_000_000 }).length;
    await mailer.close();
    const agentRate = replySent / agentSeconds;

    // ── baseline after the agent: the very mails it sent
    const concurrentAfter = await bare(mails, concurrency);
    const sequential = await bare(mails, 1);
    const concurrent = { rate: (concurrentBefore.rate + concurrentAfter.rate) / 2, cpuUs: (concurrentBefore.cpuUs + concurrentAfter.cpuUs) / 2 };

    const ratio = agentRate / concurrent.rate;
    const allReplied = complete && replySent === N && outboxCount === N;
    return {
      name: 'Outreach Agent throughput',
      figures: {
        dispatches: N,
        'ingestions failed': failed,
        'dispatches in the log': dispatches,
        'ingestion load req/s (inject, 32 in flight; agent stopped)': Math.round(N / ingestSeconds),
        'agent concurrency (AGENT_CONCURRENCY)': concurrency,
        'agent dispatches triaged and replied/s': Math.round(agentRate),
        'agent seconds': Number(agentSeconds.toFixed(2)),
        'agent replied all': allReplied ? 'yes' : `no (${replySent} ReplySent, ${outboxCount} in the outbox, of ${N})`,
        'agent CPU µs per dispatch (process, projections included)': Math.round(agentCpuUs / N),
        'projections catch-up after the agent, s': Number(projectionsLagSeconds.toFixed(2)),
        'bare OutboxMailer.send/s, sequential': Math.round(sequential.rate),
        [`bare OutboxMailer.send/s, ${concurrency} in flight (mean)`]: Math.round(concurrent.rate),
        [`bare OutboxMailer.send/s, ${concurrency} in flight, before the agent`]: Math.round(concurrentBefore.rate),
        [`bare OutboxMailer.send/s, ${concurrency} in flight, after the agent`]: Math.round(concurrentAfter.rate),
        'bare CPU µs per send (in flight)': Math.round(concurrent.cpuUs / N),
        'mean reply text chars (agent / before-baseline)': `${meanText(mails)} / ${meanText(expected)}`,
        'ratio vs sequential bare sends': Number((agentRate / sequential.rate).toFixed(3)),
        'load average (1 min) at end': Math.round(loadavg()[0]! * 10) / 10,
        cpus: cpus().length,
      },
      ratio,
      ratioLabel: `agent dispatches/s ÷ bare OutboxMailer.send/s (${concurrency} in flight)`,
      target: '≥ 66.7% (agent overhead ≤ 50% over bare sends)',
      pass: ratio >= 1 / 1.5 && allReplied && failed === 0,
    };
  } finally {
    await s.fastify.close();
    await s.services.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
}
