import { type ChildProcess, spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

/** `outreach worker <role> --metrics-port 0` as a real process: the child, its exit code to come, and its metrics base URL once it listens. */
export async function startWorkerProcess(
  role: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; exited: Promise<number | null>; url: string }> {
  const child = spawn(process.execPath, ['bin/outreach.js', 'worker', role, '--metrics-port', '0'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no metrics address in 60 s:\n${stderr}`)), 60_000);
    child.once('exit', () => reject(new Error(`the worker exited before listening:\n${stderr}`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk;
      const m = /metrics at (http:\/\/\S+)\/metrics/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  }).catch((error: unknown) => {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  });
  return { child, exited, url };
}
