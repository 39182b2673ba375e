/**
 * Ingestions per second through the whole service (auth, write tier, idempotency-free path, daily
 * caps, extraction, aiPause, one durable append with synchronous=FULL, read-your-writes wait for the
 * projections) against a bare fastify route that parses and echoes the same JSON body, both driven
 * by autocannon with 50 connections in the same run. Each server runs in its own process, so the
 * load generator never shares their event loop. Limits (write tier, daily caps) are raised.
 *
 * Headline ratio: the slower of the two ingestion variants (runExtraction false / true with the
 * offline extractor) over the bare route. Target: ≥ 50% of the bare rate and p99 ≤ 30 ms.
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { BenchResult } from './types.ts';
import { PITCH } from './ingestionBody.ts';

const DURATION_S = Number(process.env.BENCH_INGESTION_SECONDS ?? 8);
const CONNECTIONS = 50;


async function startServer(mode: 'service' | 'bare'): Promise<{ child: ChildProcess; info: { url: string; key?: string; dataDir?: string } }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./ingestionServer.ts', import.meta.url).pathname, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { child, info: JSON.parse(first) };
}

async function load(url: string, body: unknown, headers: Record<string, string>, seconds: number) {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const ok = result['2xx'];
  return { rps: ok / seconds, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx + result.timeouts, total: ok };
}

export default async function run(): Promise<BenchResult> {
  const bare = await startServer('bare');
  const service = await startServer('service');
  try {
    const auth = { authorization: `Bearer ${service.info.key}` };
    // Warm-up (JIT, SQLite page cache), not measured.
    await load(bare.info.url, PITCH, {}, 2);
    await load(service.info.url, { ...PITCH, runExtraction: false }, auth, 2);

    const bareRun = await load(bare.info.url, PITCH, {}, DURATION_S);
    const direct = await load(service.info.url, { ...PITCH, runExtraction: false }, auth, DURATION_S);
    const extracted = await load(service.info.url, { ...PITCH, runExtraction: true }, auth, DURATION_S);
    const ratioDirect = direct.rps / bareRun.rps;
    const ratioExtracted = extracted.rps / bareRun.rps;
    const ratio = Math.min(ratioDirect, ratioExtracted);
    const worstP99 = Math.max(direct.p99, extracted.p99);
    return {
      name: 'inbox ingestion vs bare fastify echo',
      figures: {
        connections: CONNECTIONS,
        'seconds per run': DURATION_S,
        'bare echo req/s': Math.round(bareRun.rps),
        'bare echo p99 ms': bareRun.p99,
        'ingest runExtraction=false req/s': Math.round(direct.rps),
        'ingest runExtraction=false p50 ms': direct.p50,
        'ingest runExtraction=false p99 ms': direct.p99,
        'ingest runExtraction=false errors': direct.errors,
        'ingest runExtraction=true (offline) req/s': Math.round(extracted.rps),
        'ingest runExtraction=true (offline) p50 ms': extracted.p50,
        'ingest runExtraction=true (offline) p99 ms': extracted.p99,
        'ingest runExtraction=true (offline) errors': extracted.errors,
        'ratio runExtraction=false': Number(ratioDirect.toFixed(3)),
        'ratio runExtraction=true': Number(ratioExtracted.toFixed(3)),
      },
      ratio,
      ratioLabel: 'slower ingestion variant req/s ÷ bare echo req/s',
      target: '≥ 50% of the bare route, p99 ≤ 30 ms at 50 connections',
      pass: ratio >= 0.5 && worstP99 <= 30 && direct.errors === 0 && extracted.errors === 0,
    };
  } finally {
    bare.child.kill('SIGTERM');
    service.child.kill('SIGTERM');
    if (service.info.dataDir) rmSync(service.info.dataDir, { recursive: true, force: true });
  }
}
