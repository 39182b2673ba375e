/**
 * Outreach Agent throughput in `npm start`'s layout: the same backlog as agentThroughput.bench.ts
 * (N pitches ingested through the REST route while the agent is stopped, each leaving an
 * `AgentDispatchRequested`), then the service itself is started as `npm start` runs it
 * (`src/server.ts` in a child process, embedded stores: projections in their own thread, the agent
 * with the other background roles in another, the API on the main thread) and the agent works the
 * backlog into the embedded outbox.
 *
 * Agent rate: N ÷ (the last `ReplySent`'s commit time − the moment the server logged "background
 * roles started", the agent's start), read from the event log. The baseline is the same as
 * agentThroughput's: N bare `OutboxMailer.send` calls with AGENT_CONCURRENCY in flight, before the
 * agent (the template drafter's replies) and after it (the very mails the agent sent), the mean of
 * the two. The baseline runs in this process while the server is not running.
 *
 * Ratio: agent dispatches/s ÷ bare concurrent sends/s. Target ≥ 66.7%, as agentThroughput's.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { eventLogFile } from '../src/services.ts';
import type { OutgoingMail } from '../src/ports/mailer.ts';
import { bareSends, expectedReply, ingestPitches, mailOfDraft, startAgentBenchService } from './agentSetup.ts';
import type { BenchResult } from './types.ts';

const N = Number(process.env.BENCH_AGENT_N ?? 2_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export default async function run(): Promise<BenchResult> {
  const s = await startAgentBenchService('bench-agent-server-');
  const { config } = s;
  const concurrency = config.AGENT_CONCURRENCY;
  let round = 0;
  const bare = (mails: OutgoingMail[], inFlight: number) => bareSends(join(s.dir, `bare-${round++}.sqlite`), mails, inFlight);
  let serverUp = false;
  try {
    const { failed, head, dispatches } = await ingestPitches(s, N);
    const expected = await Promise.all(Array.from({ length: N }, (_, i) => expectedReply(i)));
    await bare(expected, concurrency); // warm-up, not counted
    const before = await bare(expected, concurrency);
    await s.fastify.close();
    await s.services.close();

    // ── the service as `npm start` runs it, on the same DATA_DIR
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('../src/server.ts', import.meta.url).pathname], {
      env: { ...process.env, DATA_DIR: s.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    serverUp = true;
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let agentStartedAt = 0;
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (agentStartedAt === 0 && line.includes('background roles started')) agentStartedAt = Date.now();
    });

    const log = new Database(eventLogFile(config), { readonly: true, fileMustExist: true });
    const sent = log.prepare<[bigint], { n: number; last: number | null }>("SELECT count(*) AS n, max(created_at) AS last FROM events WHERE type = 'ReplySent' AND position > ?");
    const deadline = Date.now() + 300_000;
    let done = { n: 0, last: null as number | null };
    while (Date.now() < deadline && child.exitCode === null) {
      done = sent.get(head)!;
      if (done.n >= N) break;
      await sleep(20);
    }
    const drafted = log
      .prepare<[bigint], { data: string; metadata: string; id: string; stream_id: string; revision: number; position: number; type: string; created_at: number }>("SELECT * FROM events WHERE type = 'ReplyDrafted' AND position > ?")
      .all(head)
      .map((row) => mailOfDraft({ ...row, streamId: row.stream_id, revision: BigInt(row.revision), position: BigInt(row.position), data: JSON.parse(row.data), metadata: JSON.parse(row.metadata), createdAt: new Date(row.created_at) }));
    log.close();
    child.kill('SIGTERM');
    await exited;
    serverUp = false;

    const agentSeconds = done.last !== null && agentStartedAt > 0 ? (done.last - agentStartedAt) / 1000 : Number.NaN;
    const agentRate = done.n / agentSeconds;
    const after = await bare(drafted, concurrency);
    const baseline = (before.rate + after.rate) / 2;
    const ratio = agentRate / baseline;
    const allReplied = done.n === N;
    return {
      name: 'Outreach Agent throughput, npm start layout',
      figures: {
        dispatches: N,
        'ingestions failed': failed,
        'dispatches in the log': dispatches,
        'agent concurrency (AGENT_CONCURRENCY)': concurrency,
        'agent dispatches triaged and replied/s': Math.round(agentRate),
        'agent seconds (background roles started → last ReplySent committed)': Number(agentSeconds.toFixed(2)),
        'agent replied all': allReplied ? 'yes' : `no (${done.n} ReplySent of ${N})`,
        [`bare OutboxMailer.send/s, ${concurrency} in flight (mean)`]: Math.round(baseline),
        [`bare OutboxMailer.send/s, ${concurrency} in flight, before the agent`]: Math.round(before.rate),
        [`bare OutboxMailer.send/s, ${concurrency} in flight, after the agent`]: Math.round(after.rate),
        'load average (1 min) at end': Math.round(loadavg()[0]! * 10) / 10,
        cpus: cpus().length,
      },
      ratio,
      ratioLabel: `agent dispatches/s in npm start's layout ÷ bare OutboxMailer.send/s (${concurrency} in flight)`,
      target: '≥ 66.7% (agent overhead ≤ 50% over bare sends)',
      pass: ratio >= 1 / 1.5 && allReplied && failed === 0,
    };
  } finally {
    if (!serverUp) {
      await s.fastify.close().catch(() => {});
      await s.services.close().catch(() => {});
    }
    rmSync(s.dir, { recursive: true, force: true });
  }
}
