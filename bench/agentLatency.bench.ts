/**
 * Outreach Agent latency: from sending an ingestion request to the agent's `ReplySent`, at a fixed
 * rate, over real HTTP.
 *
 * The service listens on 127.0.0.1 (port 0) in this process, with the projections and the agent
 * (embedded outbox mailer, offline classifier, template drafter) running in it, as with
 * `npm start`. An undici keep-alive client in the same process POSTs pitches at RATE per second for
 * SECONDS, each on an agent-ready site and opening its own conversation. Latency of one pitch: the
 * `createdAt` of its conversation's `ReplySent` (the wall clock when the append was issued) minus the
 * wall clock just before its request was sent.
 *
 * Baseline, same run: the ingestion request latency alone (request sent to response read) at the
 * same rate, with the agent stopped, after the agent phase. Ratio: baseline request p99 ÷
 * ingestion-to-reply p99 (what share of the reply's p99 the bare request already takes).
 * Target: ingestion-to-reply p99 ≤ 500 ms at 50 ingestions per second.
 */
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { OutboxMailer } from '../src/adapters/mail/outboxMailer.ts';
import { conversationStream } from '../src/domain/conversation.ts';
import { startAgentWorker } from '../src/processors/agent/startAgentWorker.ts';
import { cpuMicros, percentile, pitch, startAgentBenchService } from './agentSetup.ts';
import type { BenchResult } from './types.ts';

const RATE = Number(process.env.BENCH_AGENT_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_AGENT_LATENCY_SECONDS ?? 20);
const BASELINE_SECONDS = Number(process.env.BENCH_AGENT_BASELINE_SECONDS ?? 10);

interface Sent {
  sentAt: number;
  /** Request latency, ms (monotonic clock). */
  requestMs: number;
  conversationId: string | null;
}

export default async function run(): Promise<BenchResult> {
  const s = await startAgentBenchService('bench-agent-latency-');
  await s.fastify.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(s.fastify.server.address() as AddressInfo).port}`;
  const client = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
  const headers = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' };
  let seq = 0;

  const post = async (): Promise<Sent> => {
    const body = JSON.stringify(pitch(seq++));
    const sentAt = Date.now();
    const started = performance.now();
    const res = await request(`${origin}${s.inboxPath}`, { dispatcher: client, method: 'POST', headers, body });
    const json = (await res.body.json()) as { conversationIds?: string[] };
    return { sentAt, requestMs: performance.now() - started, conversationId: res.statusCode === 201 ? (json.conversationIds?.[0] ?? null) : null };
  };
  /** POSTs at `rate` per second for `seconds`, each request issued on its due time without waiting for the previous. */
  const drive = async (rate: number, seconds: number) => {
    const total = Math.round(rate * seconds);
    const interval = 1000 / rate;
    const started = performance.now();
    const inFlight: Promise<Sent>[] = [];
    for (let i = 0; i < total; i++) {
      const wait = started + i * interval - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(post());
    }
    const sent = await Promise.all(inFlight);
    return { sent, issueRate: total / ((performance.now() - started) / 1000) };
  };

  const mailer = OutboxMailer.inDataDir(s.dir);
  const agent = await startAgentWorker(s.services, undefined, { mailer });
  try {
    // Warm-up (JIT, connections, page cache): a couple of seconds at the rate, not counted.
    await drive(RATE, 2);
    await agent.worker.waitForPosition(await s.services.events.headPosition(), 30_000);

    // ── ingestion to reply, agent running
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const phaseStart = performance.now();
    const phaseCpu = process.cpuUsage();
    const loaded = await drive(RATE, SECONDS);
    const allDone = await agent.worker.waitForPosition(await s.services.events.headPosition(), 60_000);
    loopDelay.disable();
    const phaseCpuUs = cpuMicros(process.cpuUsage(phaseCpu));
    const phaseMs = performance.now() - phaseStart;
    const replyMs: number[] = [];
    let missing = 0;
    for (const p of loaded.sent) {
      const stream = p.conversationId ? await s.services.events.readStream(conversationStream(p.conversationId)) : [];
      const sent = stream.find((e) => e.type === 'ReplySent');
      if (sent) replyMs.push(sent.createdAt.getTime() - p.sentAt);
      else missing++;
    }
    replyMs.sort((a, b) => a - b);
    const withAgentRequest = loaded.sent.map((p) => p.requestMs).sort((a, b) => a - b);

    // ── baseline: the ingestion request alone at the same rate, agent stopped
    await agent.stop();
    await new Promise((r) => setTimeout(r, 300));
    const bare = await drive(RATE, BASELINE_SECONDS);
    const bareRequest = bare.sent.map((p) => p.requestMs).sort((a, b) => a - b);
    const bareFailed = bare.sent.filter((p) => p.conversationId === null).length;

    const p99 = percentile(replyMs, 99);
    const ratio = percentile(bareRequest, 99) / p99;
    const allReplied = allDone && missing === 0;
    return {
      name: 'Outreach Agent ingestion-to-reply latency',
      figures: {
        'rate (ingestions/s)': RATE,
        seconds: SECONDS,
        ingestions: loaded.sent.length,
        'issue loop rate achieved (req/s)': Math.round(loaded.issueRate),
        'replied all': allReplied ? 'yes' : `no (${missing} without ReplySent)`,
        'ingestion→ReplySent p50 ms': percentile(replyMs, 50),
        'ingestion→ReplySent p99 ms': p99,
        'ingestion→ReplySent max ms': Math.round(replyMs[replyMs.length - 1] ?? NaN),
        'request latency, agent running, p50 ms': percentile(withAgentRequest, 50),
        'request latency, agent running, p99 ms': percentile(withAgentRequest, 99),
        'process CPU per ingestion and reply, µs (HTTP client included)': Math.round(phaseCpuUs / loaded.sent.length),
        'process CPU during the agent phase, % of one core': Math.round(phaseCpuUs / 10 / phaseMs),
        'event loop delay, agent phase, p99 ms': Math.round(loopDelay.percentile(99) / 1e5) / 10,
        'event loop delay, agent phase, max ms': Math.round(loopDelay.max / 1e5) / 10,
        'baseline: request latency, agent stopped, seconds': BASELINE_SECONDS,
        'baseline: request latency, agent stopped, p50 ms': percentile(bareRequest, 50),
        'baseline: request latency, agent stopped, p99 ms': percentile(bareRequest, 99),
        'baseline: failed requests': bareFailed,
        'load average (1 min) at end': Math.round(loadavg()[0]! * 10) / 10,
        cpus: cpus().length,
      },
      ratio,
      ratioLabel: 'bare ingestion request p99 ÷ ingestion→ReplySent p99',
      target: `ingestion→ReplySent p99 ≤ 500 ms at ${RATE} ingestions/s`,
      pass: p99 <= 500 && allReplied,
    };
  } finally {
    await agent.stop();
    await mailer.close();
    await client.close();
    await s.fastify.close();
    await s.services.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
}
