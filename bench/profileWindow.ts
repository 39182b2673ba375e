/**
 * A CPU profile of one window of a benchmark (the subject's phase only, not set-up or baselines),
 * taken in-process with the inspector when BENCH_CPU_PROFILE names a directory; a no-op otherwise.
 * Summarise the file with `node scripts/cpuProfileSummary.mjs <file>`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function profileWindow(name: string): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    process.stdout.write(`  cpu profile: ${file}\n`);
  };
}
