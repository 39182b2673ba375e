/**
 * Growth: ingestions per second through the whole service (as bench/ingestion.bench.ts measures
 * them: 50 connections, durable commits, runExtraction false) with 10,000 and with 1,000,000 events
 * already in the log (bench/prefillEvents.ts: earlier ingestions of other sites). Ratio: the rate
 * at 1,000,000 over the rate at 10,000. The script's own target: the rate does not fall by more
 * than 20% for 100 times the history (appends and the reads an ingestion makes are index look-ups).
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { PITCH } from './ingestionBody.ts';
import type { BenchResult } from './types.ts';

const SECONDS = Number(process.env.BENCH_GROWTH_SECONDS ?? 6);
const SIZES = [10_000, 1_000_000];

async function measure(prefill: number) {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./ingestionServer.ts', import.meta.url).pathname, 'service'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_PREFILL_EVENTS: String(prefill) },
  });
  const info = JSON.parse(
    await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    }),
  ) as { url: string; key: string; dataDir: string };
  const setupSeconds = (performance.now() - started) / 1000;
  try {
    const run = (seconds: number) =>
      autocannon({
        url: info.url,
        method: 'POST',
        connections: 50,
        duration: seconds,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${info.key}` },
        body: JSON.stringify({ ...PITCH, runExtraction: false }),
      });
    await run(2);
    const result = await run(SECONDS);
    return { rps: result['2xx'] / SECONDS, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx + result.timeouts, setupSeconds };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(info.dataDir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<BenchResult> {
  const [small, large] = [await measure(SIZES[0]!), await measure(SIZES[1]!)];
  const ratio = large.rps / small.rps;
  const figures: Record<string, number | string> = { connections: 50, 'seconds per run': SECONDS };
  for (const [size, m] of [[SIZES[0]!, small], [SIZES[1]!, large]] as const) {
    figures[`${size} events stored: req/s`] = Math.round(m.rps);
    figures[`${size} events stored: p50 ms`] = m.p50;
    figures[`${size} events stored: p99 ms`] = m.p99;
    figures[`${size} events stored: errors`] = m.errors;
    figures[`${size} events stored: set-up s`] = Number(m.setupSeconds.toFixed(1));
  }
  return {
    name: 'ingestion rate as the log grows (10,000 vs 1,000,000 events)',
    figures,
    ratio,
    ratioLabel: 'req/s with 1,000,000 events stored ÷ req/s with 10,000',
    target: '≥ 80% (own target: no more than 20% slower for 100× the history)',
    pass: ratio >= 0.8 && small.errors === 0 && large.errors === 0,
  };
}
