import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { createSubscription, deleteSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { outreach } from '../helpers/cli.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';

t.setTimeout(180_000);

const root = new URL('../../', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'outreach-startup-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The server as `npm start` runs it, until it exits or logs that it listens (then it is stopped).
 * Resolves with the exit code (null when it listened), everything it wrote, and its address.
 */
function start(env: Record<string, string>, onListening?: (url: string) => Promise<void>): Promise<{ code: number | null; out: string; url: string | null }> {
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      server.kill('SIGKILL');
      reject(new Error(`neither exited nor listened within 90 s:\n${out.slice(-3000)}`));
    }, 90_000);
    let listened: string | null = null;
    const onData = (d: Buffer) => {
      out += d;
      const line = listened === null ? out.split('\n').find((l) => l.includes('Server listening at http://127.0.0.1:')) : undefined;
      if (!line) return;
      listened = /http:\/\/127\.0\.0\.1:\d+/.exec(line)![0];
      (onListening ? onListening(listened) : Promise.resolve()).finally(() => server.kill('SIGTERM'));
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: listened === null ? code : null, out, url: listened });
    });
  });
}

const oneLine = (t: Test, out: string, pattern: RegExp, what: string) => {
  t.match(out, pattern, `${what}: says why`);
  t.notMatch(out, /\n\s+at /, `${what}: no stack trace`);
};

t.test('the port is taken (a second npm start): refused before any background role starts', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => holder.close());
  const port = (holder.address() as AddressInfo).port;
  const r = await start({ DATA_DIR: join(scratch, 'port'), PORT: String(port) });
  t.equal(r.code, 1);
  oneLine(t, r.out, new RegExp(`cannot start: PORT: 127\\.0\\.0\\.1:${port} is already in use`), 'port');
  t.notMatch(r.out, /background roles started/, 'nothing was started');
  const smtp = await start({ DATA_DIR: join(scratch, 'port'), SMTP_ENABLED: 'true', SMTP_HOST: '127.0.0.1', SMTP_PORT: String(port) });
  t.equal(smtp.code, 1);
  oneLine(t, smtp.out, new RegExp(`cannot start: SMTP_PORT: 127\\.0\\.0\\.1:${port} is already in use`), 'the mail port names its variable');
});

t.test('HOST or SMTP_HOST that does not resolve, or is not an address of this machine: one line naming the variable', async (t) => {
  const unresolved = await start({ DATA_DIR: join(scratch, 'host'), HOST: 'no-such-host.invalid' });
  t.equal(unresolved.code, 1);
  oneLine(t, unresolved.out, /cannot start: HOST: cannot listen on no-such-host\.invalid: the name does not resolve/, 'HOST unresolved');
  const foreign = await start({ DATA_DIR: join(scratch, 'host'), HOST: '203.0.113.77' });
  t.equal(foreign.code, 1);
  oneLine(t, foreign.out, /cannot start: HOST: cannot listen on 203\.0\.113\.77: not an address of this machine/, 'HOST foreign');
  const smtp = await start({ DATA_DIR: join(scratch, 'host'), SMTP_ENABLED: 'true', SMTP_PORT: '0', SMTP_HOST: 'no-such-host.invalid' });
  t.equal(smtp.code, 1);
  oneLine(t, smtp.out, /cannot start: SMTP_HOST: cannot listen on no-such-host\.invalid/, 'SMTP_HOST unresolved');
});

t.test('DATA_DIR is a file; the key file holds no key: one line each, and no store file is created', async (t) => {
  const file = join(scratch, 'not-a-dir');
  writeFileSync(file, '');
  const asFile = await start({ DATA_DIR: file });
  t.equal(asFile.code, 1);
  oneLine(t, asFile.out, /cannot start: DATA_DIR: .*not-a-dir cannot be used as the data directory: it exists and is not a directory/, 'DATA_DIR a file');
  // With SECRET_KEY set the key file is not read: the store's directory is refused the same way.
  const keyed = await start({ DATA_DIR: join(file, 'sub'), SECRET_KEY: randomBytes(32).toString('base64') });
  t.equal(keyed.code, 1);
  oneLine(t, keyed.out, /cannot start: DATA_DIR: .*not-a-dir\/sub cannot be used as the data directory: ENOTDIR/, 'DATA_DIR under a file');
  // A directory this user may not write to (/proc/sys refuses even root).
  const unwritable = await start({ DATA_DIR: '/proc/sys' });
  t.equal(unwritable.code, 1);
  oneLine(t, unwritable.out, /cannot start: DATA_DIR: \/proc\/sys cannot be used as the data directory: EACCES/, 'DATA_DIR not writable');
  // A directory the file system will not create under a parent that exists (Node's recursive mkdir looped forever).
  const uncreatable = await start({ DATA_DIR: '/proc/nope/data' });
  t.equal(uncreatable.code, 1);
  oneLine(t, uncreatable.out, /cannot start: DATA_DIR: \/proc\/nope\/data cannot be used as the data directory: ENOENT/, 'DATA_DIR not creatable');

  const dir = join(scratch, 'bad-key');
  mkdirSync(dir);
  writeFileSync(join(dir, 'secret.key'), 'garbage\n');
  const badKey = await start({ DATA_DIR: dir });
  t.equal(badKey.code, 1);
  oneLine(t, badKey.out, /cannot start: .*secret\.key does not hold a 32-byte base64 key/, 'bad key file');
  t.notOk(existsSync(join(dir, 'events.sqlite')), 'the key is read before any store is opened');
});

t.test('an EventStoreDB or MongoDB that cannot be reached, or a URL its client refuses: one line naming the variable, never the password', async (t) => {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  const cases: Array<[string, string, RegExp]> = [
    ['EVENTSTORE_URL', 'esdb://admin:S3cretPW@127.0.0.1:1?tls=false', /ECONNREFUSED|UNAVAILABLE/],
    ['EVENTSTORE_URL', 'esdb://', /esdb:\/\//],
    ['MONGODB_URL', 'mongodb://reader:S3cretPW@127.0.0.1:1/?serverSelectionTimeoutMS=2000', /ECONNREFUSED/],
    ['MONGODB_URL', 'mongodb://127.0.0.1/?bogusopt=1', /bogusopt/],
  ];
  const results = await Promise.all(cases.map(([variable, url], i) => start({ DATA_DIR: join(scratch, `store-${i}`), [variable]: url })));
  for (const [i, [variable, url, cause]] of cases.entries()) {
    const r = results[i]!;
    t.equal(r.code, 1, `${url}: exit 1`);
    oneLine(t, r.out, new RegExp(`cannot start: ${variable}: cannot open the store it names: .*(${cause.source})`), url);
    t.notMatch(r.out, /S3cretPW/, `${url}: the password is not printed`);
  }
});

t.test('the secret of a deleted subscription is not checked, whether the read models are built or not', async (t) => {
  const dataDir = join(scratch, 'deleted');
  const app = await startTestApp({ env: { SECRET_KEY: randomBytes(32).toString('base64') }, dataDir });
  const tenant = await createTenant(app.services);
  const created = await createSubscription(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, label: 'old', url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'], createdByOauthClientId: null });
  await deleteSubscription(app.services, { siteId: tenant.siteId, subscriptionId: created.subscriptionId });
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  await app.close();

  // The same other key both times: the first start records it as the log's key (its probe).
  const other = randomBytes(32).toString('base64');
  const built = await start({ DATA_DIR: dataDir, SECRET_KEY: other });
  t.equal(built.code, null, 'read models built: another key starts (nothing it must open)');
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `readmodels.sqlite${suffix}`), { force: true });
  const unbuilt = await start({ DATA_DIR: dataDir, SECRET_KEY: other });
  t.equal(unbuilt.code, null, 'read models not built: the log scan passes over the deleted subscription too');
});

t.test('with no webhook subscription yet, the first key recorded is the only one that starts, for the server and every worker', async (t) => {
  const key = randomBytes(32).toString('base64');
  const dataDir = join(scratch, 'probe');
  const first = await start({ DATA_DIR: dataDir, SECRET_KEY: key });
  t.equal(first.code, null, 'a new log: the first start records its key');
  const other = randomBytes(32).toString('base64');
  const refused = await start({ DATA_DIR: dataDir, SECRET_KEY: other });
  t.equal(refused.code, 1, 'another SECRET_KEY, though nothing is sealed yet');
  oneLine(t, refused.out, /cannot start: SECRET_KEY does not open the secret key probe recorded in the event log on \d{4}-\d\d-\d\dT/, 'another key');
  for (const role of ['webhooks', 'agent', 'agent-runs']) {
    const worker = await outreach(['worker', role], { DATA_DIR: dataDir, SECRET_KEY: other });
    t.equal(worker.code, 1, `outreach worker ${role} with another SECRET_KEY`);
    t.match(worker.stdout + worker.stderr, /SECRET_KEY does not open the secret key probe/);
  }
  const lost = await start({ DATA_DIR: dataDir });
  t.equal(lost.code, 1, 'no SECRET_KEY: a new secret.key does not open it either');
  t.equal((await start({ DATA_DIR: dataDir, SECRET_KEY: key })).code, null, 'the recorded key starts');
});

t.test('a key that does not open the sealed webhook secrets stops the start; the right key starts, and PORT=0 names its port', async (t) => {
  const key = randomBytes(32).toString('base64');
  const dataDir = join(scratch, 'sealed');
  const app = await startTestApp({ env: { SECRET_KEY: key }, dataDir });
  const tenant = await createTenant(app.services);
  await createSubscription(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, label: 'crm', url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'], createdByOauthClientId: null });
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  await app.close();

  const wrong = await start({ DATA_DIR: dataDir, SECRET_KEY: randomBytes(32).toString('base64') });
  t.equal(wrong.code, 1, 'another SECRET_KEY');
  oneLine(t, wrong.out, /cannot start: SECRET_KEY does not open any of the webhook signing secrets sealed in the event log \(subscriptions [0-9A-Z]{26}\)/, 'another key');
  // The agent's workers tag their mail's bounce addresses with the key: they are checked too.
  for (const role of ['agent', 'agent-runs']) {
    const worker = await outreach(['worker', role], { DATA_DIR: dataDir, SECRET_KEY: randomBytes(32).toString('base64') });
    t.equal(worker.code, 1, `outreach worker ${role} with another SECRET_KEY`);
    t.match(worker.stdout + worker.stderr, /SECRET_KEY does not open any of the webhook signing secrets/);
  }
  const lost = await start({ DATA_DIR: dataDir });
  t.equal(lost.code, 1, 'no SECRET_KEY: secret.key is created anew, and does not open them either');
  oneLine(t, lost.out, /cannot start: .*secret\.key does not open any of the webhook signing secrets/, 'a lost key');
  // Read models not built yet (here: their file deleted): the subscriptions are found in the log.
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `readmodels.sqlite${suffix}`), { force: true });
  const unbuilt = await start({ DATA_DIR: dataDir, SECRET_KEY: randomBytes(32).toString('base64') });
  t.equal(unbuilt.code, 1, 'another key, read models not built');
  oneLine(t, unbuilt.out, /cannot start: SECRET_KEY does not open any of the webhook signing secrets sealed in the event log/, 'found in the log');
  const overridden = await start({ DATA_DIR: dataDir, SECRET_KEY: randomBytes(32).toString('base64'), SECRET_KEY_CHECK: 'false' });
  t.equal(overridden.code, null, 'SECRET_KEY_CHECK=false starts anyway (a key lost for good)');
  // That start recorded nothing: its key opens none of the secrets (they were not rotated under it).
  t.notMatch(overridden.out, /does not open/, 'SECRET_KEY_CHECK=false says nothing of the key');

  let issuer = '';
  let server = '';
  const right = await start({ DATA_DIR: dataDir, SECRET_KEY: key }, async (url) => {
    const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
    issuer = metadata.issuer;
    server = ((await (await fetch(`${url}/api/v1/openapi.json`)).json()) as { servers: Array<{ url: string }> }).servers[0]!.url;
  });
  t.equal(right.code, null, 'the right key starts');
  t.equal(issuer, right.url!.replace('127.0.0.1', 'localhost'), 'the default public address names the port PORT=0 took');
  t.equal(server, issuer, 'in the OpenAPI document too');
  // A blank PUBLIC_BASE_URL is unset (as every blank variable): it named port 0.
  let blankIssuer = '';
  const blank = await start({ DATA_DIR: dataDir, SECRET_KEY: key, PUBLIC_BASE_URL: ' ' }, async (url) => {
    blankIssuer = ((await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as { issuer: string }).issuer;
  });
  t.equal(blankIssuer, blank.url!.replace('127.0.0.1', 'localhost'), 'PUBLIC_BASE_URL blank: the port PORT=0 took');
});
