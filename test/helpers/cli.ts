import { spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

/** One line of `outreach events read|tail`. */
export interface EventLine {
  type: string;
  position: string;
  time: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  stream: string;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON object `--json` prints. */
  json<T = Record<string, unknown>>(): T;
  /** stdout as JSON lines. */
  lines<T = Record<string, unknown>>(): T[];
}

/**
 * CLI processes of this test file running at once. Each start loads the TypeScript loader and the
 * service's modules (about 1.5 s of CPU): two dozen started together on a two-core machine starved
 * the first past its 30 s limit, so the rest wait for a slot.
 */
const MAX_RUNNING = 4;
let running = 0;
const waiting: Array<() => void> = [];

/**
 * Another user and working directory for a CLI process: `uid` and `gid` (root only); `cwd`, one that
 * user may write to (the test runner's process info is written under it).
 */
export interface RunAs {
  uid?: number;
  gid?: number;
  cwd?: string;
}

/** Runs `node bin/outreach.js <args>` as a real process with the given environment (DATA_DIR etc.). */
export async function outreach(args: string[], env: Record<string, string>, as?: RunAs): Promise<CliResult> {
  if (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await run(args, env, as);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function run(args: string[], env: Record<string, string>, as?: RunAs): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${root}bin/outreach.js`, ...args], {
      cwd: as?.cwd ?? root,
      ...(as?.uid !== undefined ? { uid: as.uid, gid: as.gid } : {}),
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        LOG_LEVEL: 'silent',
        ...env,
        // Where tap's process info of the child is written (it names the test run's directory otherwise).
        ...(as?.cwd ? { _TAPJS_PROCESSINFO_CWD_: as.cwd } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          const lines = stdout.trim().split('\n');
          if (lines.length !== 1) throw new Error(`expected one JSON line, got: ${stdout}\nstderr: ${stderr}`);
          return JSON.parse(lines[0]!) as T;
        },
        lines<T>() {
          return stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as T);
        },
      });
    });
  });
}
