import { type ChildProcess, spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

/**
 * `outreach worker <role> --metrics-port 0` as a real process: the child, its exit code to come, and
 * its metrics base URL once it listens. Without `metrics`, no metrics port (nothing scrapes it) and
 * the URL is empty; it resolves once the worker says it runs.
 */
export async function startWorkerProcess(
  role: string,
  env: Record<string, string>,
  { metrics = true } = {},
): Promise<{ child: ChildProcess; exited: Promise<number | null>; url: string }> {
  const child = spawn(process.execPath, ['bin/outreach.js', 'worker', role, ...(metrics ? ['--metrics-port', '0'] : [])], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const done = (settle: () => void) => {
      clearTimeout(timer);
      settle();
    };
    const timer = setTimeout(() => reject(new Error(`the worker did not start in 60 s:\n${output}`)), 60_000);
    child.once('exit', () => done(() => reject(new Error(`the worker exited before it started:\n${output}`))));
    const look = (chunk: Buffer) => {
      output += chunk;
      const m = /metrics at (http:\/\/\S+)\/metrics/.exec(output);
      if (m) done(() => resolve(m[1]!));
      else if (!metrics && / running; Ctrl-C stops it/.test(output)) done(() => resolve(''));
    };
    child.stderr!.on('data', look);
    child.stdout!.on('data', look);
  }).catch((error: unknown) => {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  });
  return { child, exited, url };
}
