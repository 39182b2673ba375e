/**
 * Where an ingestion's time goes: starts bench/ingestionServer.ts (the service, as the ingestion
 * bench runs it), warms it up for 2 s, then profiles its main thread (the inspector's sampling
 * profiler, 200 µs) while autocannon drives it with 50 connections and the ingestion bench's body
 * (runExtraction false) for BENCH_INGESTION_SECONDS (8), and prints the profile grouped by what the
 * code does (bench/cpuProfileSummary.ts). Not a `.bench.ts`: `npm run bench` does not run it.
 *
 *   node --import tsx bench/ingestionProfile.ts [profile.cpuprofile]
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PITCH } from './ingestionBody.ts';
import { printSummary, summarise } from './cpuProfileSummary.ts';

const seconds = Number(process.env.BENCH_INGESTION_SECONDS ?? 8);
const file = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'ingestion-profile-')), 'ingestion.cpuprofile');
const child = spawn(process.execPath, ['--import', 'tsx', new URL('./ingestionServer.ts', import.meta.url).pathname, 'service'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, BENCH_PROFILE_FILE: file },
});
const lines = createInterface({ input: child.stdout! });
const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
const info = JSON.parse(await nextLine()) as { url: string; key: string };
const drive = (s: number) =>
  autocannon({
    url: info.url,
    method: 'POST',
    connections: 50,
    duration: s,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${info.key}` },
    body: JSON.stringify({ ...PITCH, runExtraction: process.env.BENCH_RUN_EXTRACTION === 'true' }),
  });
await drive(2);
child.kill('SIGUSR2');
await nextLine();
const result = await drive(seconds);
child.kill('SIGUSR2');
const { processCpuUs } = JSON.parse(await nextLine()) as { processCpuUs: number };
process.stdout.write(`${result['2xx']} ingestions in ${seconds} s (${Math.round(result['2xx'] / seconds)}/s), p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}\n`);
process.stdout.write(`process CPU (all threads) ${Math.round(processCpuUs / result['2xx'])} µs per ingestion, ${(processCpuUs / 1e6 / seconds).toFixed(2)} cores\n`);
child.kill('SIGTERM');
process.stdout.write(`${file}\n`);
printSummary(summarise(JSON.parse(readFileSync(file, 'utf8')), result['2xx']));
