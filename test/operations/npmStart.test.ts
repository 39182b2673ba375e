import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

t.setTimeout(180_000);

const root = new URL('../../', import.meta.url).pathname;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `npm start` as an operator (or `docker stop`, which signals the image's `npm start`) runs it: SIGTERM
 * goes to npm, which passes it to its child. That child must be the server itself, not a shell that
 * dies and leaves the server running without a graceful shutdown.
 */
t.test('SIGTERM to `npm start` shuts the server down gracefully: npm exits 0 and no server is left', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-npm-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const npm = spawn('npm', ['start'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  npm.stdout.on('data', (d) => (out += d));
  npm.stderr.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));

  const { url, serverPid } = await new Promise<{ url: string; serverPid: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen within 90 s:\n${out.slice(-4000)}`)), 90_000);
    const check = () => {
      const line = out.split('\n').find((l) => l.includes('Server listening at http://127.0.0.1:'));
      if (!line) return;
      clearTimeout(timer);
      npm.stdout.off('data', check);
      const log = JSON.parse(line) as { pid: number; msg: string };
      resolve({ url: /http:\/\/127\.0\.0\.1:\d+/.exec(log.msg)![0], serverPid: log.pid });
    };
    npm.stdout.on('data', check);
  });
  // Whatever happens below, no server outlives the test.
  t.teardown(() => {
    if (alive(serverPid)) process.kill(serverPid, 'SIGKILL');
  });
  t.not(serverPid, npm.pid, 'the server logs its own pid');
  t.equal((await fetch(`${url}/healthz`)).status, 200);

  npm.kill('SIGTERM');
  const { code } = await exited;
  t.equal(code, 0, 'npm exits 0');
  if (code !== 0) t.comment(out.slice(-2000));
  // npm has exited; the server must be gone too (give a loaded machine time to reap it).
  const deadline = Date.now() + 30_000;
  while (alive(serverPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.notOk(alive(serverPid), 'the server process is gone');
  t.match(out, /"msg":"shutting down"/, 'the server ran its graceful shutdown');
  t.match(out, /"msg":"shut down"/, 'and finished it');
});
