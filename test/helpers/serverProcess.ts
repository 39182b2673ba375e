import { type ChildProcess, spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  /** Base URL the server listens on (it binds port 0 on 127.0.0.1). */
  url: string;
  /** Everything it wrote to stdout and stderr so far (pino JSON lines). */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends SIGKILL if still running and waits for the exit. */
  kill(): Promise<void>;
}

/**
 * The real server (`node --import tsx src/server.ts`, as `npm start`) as a child process on port 0;
 * resolves once it listens, with the address it logged.
 */
export function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${out.slice(-4000)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk;
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        child,
        url: match[1]!,
        output: () => out,
        exited,
        async kill() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c));
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${out.slice(-4000)}`));
    });
  });
}
