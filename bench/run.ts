/**
 * `npm run bench [-- filter[,filter...]]`: runs every `bench/*.bench.ts` (sorted by file name; with
 * filters, only those whose file name contains one of them), prints each result, then a markdown table, and writes
 * `bench/results/latest.json`. BENCHMARKS.md is written by hand from such a run.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchResult } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const wanted = filter ? filter.split(',').filter(Boolean) : [];
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no bench/*.bench.ts matches ${JSON.stringify(filter)}`);
  process.exit(1);
}

const fmt = (v: number | string) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
const results: Array<BenchResult & { file: string; seconds: number }> = [];
for (const file of files) {
  process.stdout.write(`\n## ${file}\n`);
  const started = performance.now();
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: () => Promise<BenchResult> };
  const result = await mod.default();
  const seconds = (performance.now() - started) / 1000;
  results.push({ file, seconds, ...result });
  for (const [key, value] of Object.entries(result.figures)) process.stdout.write(`  ${key}: ${fmt(value)}\n`);
  process.stdout.write(`  ratio (${result.ratioLabel}): ${(result.ratio * 100).toFixed(1)}%  target ${result.target}  ${result.pass ? 'PASS' : 'BELOW TARGET'}  (${seconds.toFixed(1)} s)\n`);
}

process.stdout.write('\n| benchmark | ratio | measured as | target | result |\n|---|---|---|---|---|\n');
for (const r of results) {
  process.stdout.write(`| ${r.name} | ${(r.ratio * 100).toFixed(1)}% | ${r.ratioLabel} | ${r.target} | ${r.pass ? 'pass' : 'below target'} |\n`);
}

const machine = { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', platform: `${process.platform}-${process.arch}` };
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'latest.json'), JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2) + '\n');
process.stdout.write(`\nwrote bench/results/latest.json (${machine.cpus} CPUs, node ${machine.node})\n`);
// Below-target figures are reported, not failed: a benchmark is not a test.
process.exit(0);
