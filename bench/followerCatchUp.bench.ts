/**
 * A read-model cache that follows a file another connection writes (the API's in-memory read
 * models, after the projection thread found a checkpoint moved by another process, or after a
 * `RUN_PROJECTIONS=false` node's look): `SqliteReadModelStore.reload()` after one more committed
 * document, against a full load of the same file (what it did before: every document read and
 * parsed), measured in the same run.
 *
 * 100,000 documents of ~400 bytes in two collections; each round the writer commits one document,
 * then the follower reloads. Ratio: full load time ÷ reload time (how many times faster).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../src/adapters/sqlite/sqliteReadModelStore.ts';
import type { BenchResult } from './types.ts';

const N = Number(process.env.BENCH_FOLLOWER_DOCS ?? 100_000);
const ROUNDS = 11;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-follower-'));
  const file = join(dir, 'readmodels.sqlite');
  const writer = new SqliteReadModelStore(file);
  try {
    let position = -1n;
    const commit = async (count: number) => {
      const from = position;
      const to = position + BigInt(count);
      await writer.applyBatch('p', 1, from, to, async (at) => {
        for (let p = from + 1n; p <= to; p++) {
          await at(p).put(p % 2n ? 'conversations' : 'conversationMessages', {
            id: `d${p}`,
            siteId: 's1',
            subject: 'Quick link suggestion for your SEO article',
            createdAt: new Date(Number(p)).toISOString(),
            bodyText: 'x'.repeat(300),
          });
        }
      });
      position = to;
    };
    for (let done = 0; done < N; done += 1_000) await commit(Math.min(1_000, N - done));

    const follower = new SqliteReadModelStore(file);
    const reloads: number[] = [];
    const loads: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await commit(1);
      let started = performance.now();
      follower.reload();
      reloads.push(performance.now() - started);
      started = performance.now();
      const fresh = new SqliteReadModelStore(file); // the constructor loads every document
      loads.push(performance.now() - started);
      await fresh.close();
    }
    const held = (await follower.find('conversations', {})).length + (await follower.find('conversationMessages', {})).length;
    await follower.close();
    const reload = median(reloads);
    const load = median(loads);
    const ratio = load / reload;
    return {
      name: 'Read-model follower catch-up',
      figures: {
        documents: N,
        'reload after one committed document, ms (median of 11)': Number(reload.toFixed(2)),
        'full load of the same file, ms (median of 11)': Number(load.toFixed(2)),
        'documents the follower holds at the end': held,
      },
      ratio,
      ratioLabel: 'full load time ÷ reload time (×100%)',
      target: '> 100% (faster than a full load; no figure in the issue)',
      pass: ratio > 1 && held === N + ROUNDS,
    };
  } finally {
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
