import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createTeam } from '../../src/commands/tenancy.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

t.setTimeout(120_000);

const root = new URL('../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'outreach-cli-pipe-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir };

const config = loadConfig(env);
const setup = await createServices(config);
await createTeam(setup, { name: 'Acme', ownerEmail: 'owner@acme.test' });

t.teardown(() => setup.close());

/** `outreach events tail` (following) as a real process; killed after 60 s should a test leave it running. */
function startTail() {
  const child = spawn(process.execPath, ['bin/outreach.js', 'events', 'tail'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    }),
  );
  return { child, exited, stderr: () => stderr };
}

t.test('events tail whose reader went away (`| head -1`) ends with status 0 and no stack trace', async (t) => {
  const { child, exited, stderr } = startTail();

  // Read the first line, then close the pipe as `head -1` does.
  const first = await new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', function onData(d) {
      out += d;
      if (out.includes('\n')) {
        child.stdout.off('data', onData);
        resolve(out.split('\n')[0]!);
      }
    });
  });
  t.match(JSON.parse(first), { type: String, position: /^\d+$/ });
  child.stdout.destroy();

  // The follower writes the next event into the closed pipe.
  await createTeam(setup, { name: 'Beta', ownerEmail: 'owner@beta.test' });
  const { code } = await exited;
  t.equal(code, 0, stderr());
  t.notMatch(stderr(), /EPIPE|Unhandled/, 'no stack trace');
});

t.test('events tail, following, ends on Ctrl-C (SIGINT) with status 0 after printing what came', async (t) => {
  const { child, exited, stderr } = startTail();
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  // Following once the history is out: a new event is printed, then Ctrl-C.
  for (const deadline = Date.now() + 30_000; !stdout.includes('\n') && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  await createTeam(setup, { name: 'Gamma', ownerEmail: 'owner@gamma.test' });
  for (const deadline = Date.now() + 30_000; !stdout.includes('Gamma') && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  t.match(stdout, /Gamma/, 'the new event, while following');
  child.kill('SIGINT');
  t.same(await exited, { code: 0, signal: null }, `ended by its own handler, not the signal: ${stderr()}`);
});
