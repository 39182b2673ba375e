/**
 * Rebuild growth: a full bulk rebuild of every projection over about 100,000 and about 1,000,000
 * events (the projectionRebuild history mix, 38 events per team), each size in its own process
 * (bench/rebuildGrowthWorker.ts) so its peak memory is its own. Reports events/s, time and peak
 * RSS / heapUsed per size; the headline ratio is the large size's rate over the small one's (1 =
 * linear growth: ten times the events take ten times as long).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BenchResult } from './types.ts';

const SMALL_TEAMS = Number(process.env.BENCH_GROWTH_SMALL_TEAMS ?? 2_564); // 97,432 events
const LARGE_TEAMS = Number(process.env.BENCH_GROWTH_LARGE_TEAMS ?? 25_641); // 974,358 events

interface SizeResult {
  teams: number;
  events: number;
  documents: number;
  generationSeconds: number;
  rawEventsPerSecond: number;
  rebuildSeconds: number;
  rebuildEventsPerSecond: number;
  rssBeforeMb: number;
  peakRssMb: number;
  heapBeforeMb: number;
  peakHeapUsedMb: number;
}

async function measure(teams: number, dir: string): Promise<SizeResult> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', new URL('./rebuildGrowthWorker.ts', import.meta.url).pathname, String(teams), dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as SizeResult));
    child.once('exit', (code) => (code ? reject(new Error(`rebuildGrowthWorker ${teams} exited with ${code}`)) : undefined));
  });
}

export default async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'outreach-bench-growth-'));
  try {
    const small = await measure(SMALL_TEAMS, dir);
    const large = await measure(LARGE_TEAMS, dir);
    const figures: Record<string, number | string> = {};
    for (const r of [small, large]) {
      const k = `${r.events.toLocaleString('en')} events`;
      figures[`${k}: documents after rebuild`] = r.documents;
      figures[`${k}: bulk insert of the history (s)`] = r.generationSeconds;
      figures[`${k}: raw SELECT + JSON.parse (events/s)`] = r.rawEventsPerSecond;
      figures[`${k}: rebuild (s)`] = r.rebuildSeconds;
      figures[`${k}: rebuild (events/s)`] = r.rebuildEventsPerSecond;
      figures[`${k}: rebuild ÷ raw`] = Number((r.rebuildEventsPerSecond / r.rawEventsPerSecond).toFixed(3));
      figures[`${k}: RSS before → peak (MB)`] = `${r.rssBeforeMb} → ${r.peakRssMb}`;
      figures[`${k}: heapUsed before → peak (MB)`] = `${r.heapBeforeMb} → ${r.peakHeapUsedMb}`;
    }
    const ratio = large.rebuildEventsPerSecond / small.rebuildEventsPerSecond;
    figures['time ratio large ÷ small'] = Number((large.rebuildSeconds / small.rebuildSeconds).toFixed(2));
    figures['event ratio large ÷ small'] = Number((large.events / small.events).toFixed(2));
    return {
      name: 'projection rebuild growth: 100k vs 1M events',
      figures,
      ratio,
      ratioLabel: 'rebuild events/s at 1M ÷ at 100k (1 = linear)',
      target: '≥ 80% (linear growth, not worse)',
      pass: ratio >= 0.8,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
