import { spawn } from 'node:child_process';
import t from 'tap';
import { CLOSE_GRACE_MS, REPEAT_SIGNAL_MS } from '../../src/lifecycle/shutdown.ts';

const root = new URL('../../', import.meta.url).pathname;

/** The fixture process (stores that never close), once it printed `ready`. */
async function start(boundMs: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/stuckShutdown.ts', String(boundMs)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: performance.now() })));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      if (out.includes('ready')) resolve();
    });
    child.once('exit', () => reject(new Error(`fixture exited before ready: ${out}`)));
  });
  return { child, exited, output: () => out };
}

t.test('stores that do not close: the process exits 1 once the bound and the close grace are over', async (t) => {
  const p = await start(200);
  t.teardown(() => p.child.kill('SIGKILL'));
  const sent = performance.now();
  p.child.kill('SIGTERM');
  const { code, at } = await p.exited;
  t.equal(code, 1);
  t.ok(at - sent >= 200 + CLOSE_GRACE_MS - 100, `waited ${Math.round(at - sent)} ms for the stores`);
  t.ok(at - sent < 200 + CLOSE_GRACE_MS + 5_000, `exited ${Math.round(at - sent)} ms after the signal`);
  t.match(p.output(), /the stores did not close within the shutdown bound/);
});

t.test('a second signal during the shutdown exits at once with 1; the same signal repeated at once (npm forwarding Ctrl-C) does not', async (t) => {
  const p = await start(60_000);
  t.teardown(() => p.child.kill('SIGKILL'));
  const first = performance.now();
  p.child.kill('SIGINT');
  await new Promise((resolve) => setTimeout(resolve, 100));
  p.child.kill('SIGINT'); // as npm does: it got the terminal's SIGINT too and forwards it
  await new Promise((resolve) => setTimeout(resolve, REPEAT_SIGNAL_MS - (performance.now() - first) + 300));
  t.equal(p.child.exitCode, null, 'still shutting down gracefully after the repeated signal');
  t.notMatch(p.output(), /second signal/);
  const sent = performance.now();
  p.child.kill('SIGTERM');
  const { code, at } = await p.exited;
  t.equal(code, 1);
  t.ok(at - sent < 5_000, `exited ${Math.round(at - sent)} ms after the second signal`);
  t.match(p.output(), /second signal during the shutdown: exiting now/);
});
