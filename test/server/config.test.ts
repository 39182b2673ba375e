import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fetch } from 'undici';
import { ConfigError, loadConfig } from '../../src/config.ts';

const root = new URL('../../', import.meta.url).pathname;
const validKey = Buffer.alloc(32, 7).toString('base64');

t.test('defaults', async (t) => {
  const c = loadConfig({});
  t.equal(c.PORT, 3000);
  t.equal(c.DATA_DIR, './data');
  t.equal(c.EVENTSTORE_URL, undefined);
  t.equal(c.MONGODB_URL, undefined);
  t.equal(c.PUBLIC_BASE_URL, 'http://localhost:3000');
  t.equal(loadConfig({ PORT: '' }).PORT, 3000, 'an empty variable counts as unset');
  const blank = loadConfig({ PORT: ' ', WEBHOOK_MAX_RETRIES: '  ', SHUTDOWN_TIMEOUT_MS: '\t', READ_YOUR_WRITES_TIMEOUT_MS: ' \n' });
  t.same(
    [blank.PORT, blank.WEBHOOK_MAX_RETRIES, blank.SHUTDOWN_TIMEOUT_MS, blank.READ_YOUR_WRITES_TIMEOUT_MS],
    [3000, loadConfig({}).WEBHOOK_MAX_RETRIES, 10_000, 5_000],
    'a blank variable counts as unset too (it was coerced to 0)',
  );
  for (const written of ['0x10', '1e3', '0b11', '12abc']) {
    t.throws(() => loadConfig({ PORT: written }), { message: /PORT: must be a number in decimal digits/ }, `PORT=${written} is refused`);
  }
  t.equal(loadConfig({ PORT: ' 8080 ' }).PORT, 8080, 'spaces around a number are allowed');
});

t.test('good values are accepted', async (t) => {
  const c = loadConfig({
    PORT: '8080',
    SECRET_KEY: validKey,
    EVENTSTORE_URL: 'esdb://localhost:2113?tls=false&node_preference=Leader&keepAliveInterval=10000',
    MONGODB_URL: 'mongodb://localhost:27017/?replicaSet=rs0',
    LOG_LEVEL: 'debug',
    PUBLIC_BASE_URL: 'https://api.example.com/',
  });
  t.equal(c.PORT, 8080);
  t.equal(c.SECRET_KEY, validKey);
  const urlSafe = Buffer.alloc(32, 0xfb).toString('base64url');
  t.equal(loadConfig({ SECRET_KEY: urlSafe }).SECRET_KEY, urlSafe, 'a base64url key, which Buffer decodes alike, is taken');
  for (const written of [`"${validKey}"`, `'${validKey}'`, `${validKey.slice(0, 20)} ${validKey.slice(20)}`]) {
    t.equal(Buffer.from(loadConfig({ SECRET_KEY: written }).SECRET_KEY!, 'base64').toString('base64'), validKey, `${written}: quotes or spaces in the key, taken before, still are`);
  }
  t.equal(loadConfig({ MAIL_DOMAIN: 'inbound.example.com.' }).MAIL_DOMAIN, 'inbound.example.com', "a fully qualified name's trailing dot is dropped");
  t.equal(c.PUBLIC_BASE_URL, 'https://api.example.com', 'trailing slash dropped');
});

t.test('a bad value is refused with a message naming the variable', async (t) => {
  const cases: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['EVENTSTORE_URL', 'http://x'],
    ['MONGODB_URL', 'postgres://x'],
    ['SECRET_KEY', 'short'],
    ['SECRET_KEY', Buffer.alloc(16).toString('base64')],
    ['SECRET_KEY', `!!!!${validKey}`],
    ['LOG_LEVEL', 'loud'],
    ['MAIL_DOMAIN', '...'],
    ['MAIL_DOMAIN', '-'],
    ['OPENAI_BASE_URL', 'ftp://models.example.com/v1'],
    ['OPENAI_BASE_URL', 'javascript:alert(1)'],
    ['PUBLIC_BASE_URL', 'not a url'],
    ['MAIL_DOMAIN', 'in valid'],
    ['READ_YOUR_WRITES_TIMEOUT_MS', '-5'],
    ['RUN_PROJECTIONS', 'maybe'],
    ['WEBHOOK_ALLOWED_RANGES', '10.0.0.0/99'],
    ['PUBLIC_BASE_URL', 'localhost:3000'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
    ['PUBLIC_BASE_URL', 'https://example.com/?x=1'],
    ['PUBLIC_BASE_URL', 'https://example.com/?'],
    ['PUBLIC_BASE_URL', 'https://user:pw@example.com'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '2'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['WEBHOOK_EXTRA_CA_FILE', '/nonexistent/ca.pem'],
    ['WEBHOOK_EXTRA_CA_FILE', new URL(import.meta.url).pathname],
    ['OAUTH_CLIENT_METADATA_EXTRA_CA_FILE', '/nonexistent/ca.pem'],
    ['EVENTSTORE_URL', 'esdb://admin:s3cret@127.0.0.1:2113?tls=false&bogusOption=1'],
    ['EVENTSTORE_URL', 'esdb://admin:s3cret@127.0.0.1:2113?tls=maybe'],
    ['EVENTSTORE_URL', 'esdb://admin:s3cret@127.0.0.1:2113?defaultDeadline=soon'],
    ['EVENTSTORE_URL', 'esdb://admin:s3cret@127.0.0.1:2113?tls=true&tlsVerifyCert=false'],
    ['EVENTSTORE_URL', 'kurrentdb://admin:s3cret@127.0.0.1:2113?tls=false'],
    ['EVENTSTORE_URL', 'esdb+discover://admin:s3cret@db:2113?dnsdiscover=true'],
    ['EVENTSTORE_URL', 'esdb://admin:s3cret@127.0.0.1:2113?throwOnAppendFailure=false'],
  ];
  for (const [name, value] of cases) {
    let thrown: unknown = null;
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      thrown = error;
    }
    t.ok(thrown instanceof ConfigError, `${name}=${value} refused with a ConfigError`);
    t.match((thrown as Error | null)?.message ?? '', new RegExp(`\\b${name}\\b`), `${name}=${value}: message names ${name}`);
    t.notMatch((thrown as Error | null)?.message ?? '', /s3cret/, `${name}=${value}: the message has no password`);
  }
});

t.test('TRUST_PROXY: false, true, or the proxies\' addresses; a header timeout longer than the request timeout is refused', async (t) => {
  t.equal(loadConfig({}).TRUST_PROXY, false);
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY, true);
  t.same(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).TRUST_PROXY, ['loopback', '10.0.0.0/8', '::1']);
  t.throws(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '60000' }), /HTTP_HEADERS_TIMEOUT_MS: must be at most HTTP_REQUEST_TIMEOUT_MS/);
  t.equal(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '1000' }).HTTP_HEADERS_TIMEOUT_MS, 1000);
  t.equal(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000' }).HTTP_HEADERS_TIMEOUT_MS, 5000, 'the default header timeout follows a shorter request timeout');
  for (const orphan of ['0', '10000']) {
    t.throws(() => loadConfig({ WEBHOOK_ORPHAN_AFTER_MS: orphan }), /WEBHOOK_ORPHAN_AFTER_MS: must be longer than WEBHOOK_TIMEOUT_MS \(10000\)/, `orphan bound ${orphan} ms`);
  }
  t.equal(loadConfig({ WEBHOOK_ORPHAN_AFTER_MS: '3000', WEBHOOK_TIMEOUT_MS: '2000' }).WEBHOOK_ORPHAN_AFTER_MS, 3000);
  // Beyond a timer's reach (2^31 - 1 ms) the orphan loop's wait fired at once, a busy loop flooding the log.
  for (const db of ['a/b', 'a.b', 'a b', 'x'.repeat(64)]) t.throws(() => loadConfig({ MONGODB_DB: db }), /MONGODB_DB: must be a MongoDB database name/, `MONGODB_DB ${JSON.stringify(db)}`);
  t.equal(loadConfig({ MONGODB_DB: 'outreach_prod-2' }).MONGODB_DB, 'outreach_prod-2');
  for (const local of ['...', '.a', 'a.', 'a..b', 'x'.repeat(65)]) t.throws(() => loadConfig({ AGENT_FROM_LOCAL_PART: local }), /AGENT_FROM_LOCAL_PART: must be an email local part/, `AGENT_FROM_LOCAL_PART ${local}`);
  t.equal(loadConfig({ AGENT_FROM_LOCAL_PART: 'outreach.team+1' }).AGENT_FROM_LOCAL_PART, 'outreach.team+1');
  t.throws(() => loadConfig({ OUTBOUND_SMTP_URL: 'smtp://u:p@relay:99999' }), /OUTBOUND_SMTP_URL: .*port from 1 to 65535/);
  t.throws(() => loadConfig({ OUTBOUND_SMTP_URL: 'smtp://relay:0' }), /OUTBOUND_SMTP_URL: .*port from 1 to 65535/, 'port 0 is refused: the mailer would dial 587 instead');
  for (const orphan of ['0', '999']) {
    t.throws(() => loadConfig({ AGENT_ORPHAN_AFTER_MS: orphan }), /AGENT_ORPHAN_AFTER_MS: .*1000/, `agent orphan bound ${orphan} ms: no reply could be sent`);
  }
  t.equal(loadConfig({ AGENT_ORPHAN_AFTER_MS: '1000' }).AGENT_ORPHAN_AFTER_MS, 1000);
  for (const name of ['WEBHOOK_ORPHAN_AFTER_MS', 'AGENT_ORPHAN_AFTER_MS']) {
    t.throws(() => loadConfig({ [name]: '5000000000' }), new RegExp(`${name}: .*86400000`), `${name} beyond a day`);
    t.equal(loadConfig({ [name]: '86400000' })[name as 'WEBHOOK_ORPHAN_AFTER_MS'], 86_400_000, `${name}: a day`);
  }
  for (const url of ['esdb://db:2113?tls=false&keepAliveInterval=-1&keepAliveTimeout=-1', 'esdb+discover://db:2113?dnsDiscover=true&tlsVerifyCert=true']) {
    t.equal(loadConfig({ EVENTSTORE_URL: url }).EVENTSTORE_URL, url, `the client's own values are accepted: ${url}`);
  }
});

t.test('a PUBLIC_BASE_URL that is no URL is one line', async (t) => {
  try {
    loadConfig({ PUBLIC_BASE_URL: 'notaurl' });
    t.fail('accepted');
  } catch (error) {
    t.equal((error as Error).message.match(/PUBLIC_BASE_URL/g)?.length, 1, (error as Error).message);
  }
});

t.test('several bad values: every one is named', async (t) => {
  try {
    loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', SECRET_KEY: 'short' });
    t.fail('should have thrown');
  } catch (error) {
    for (const name of ['PORT', 'LOG_LEVEL', 'SECRET_KEY']) t.match((error as Error).message, name);
  }
});

function runServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

t.test('the server process stops with a non-zero exit and a message naming PORT when PORT=abc', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-cfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const server = runServer({ PORT: 'abc', DATA_DIR: dir });
  const code = await server.exited;
  t.not(code, 0, 'non-zero exit');
  t.match(server.err(), /PORT/, 'stderr names PORT');
  t.notMatch(server.err(), /at .*\.ts:\d+/, 'a message, not a stack trace');
});

t.test('the server process serves /healthz on the configured port', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-srv-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const server = runServer({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'info' });
  t.teardown(() => {
    server.child.kill('SIGTERM');
  });
  const deadline = Date.now() + 60_000; // a cold tsx start on a loaded CI machine can take well over 15 s
  let url: string | undefined;
  while (!url && Date.now() < deadline) {
    url = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(server.out())?.[1];
    if (!url) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(url, `server announced its address${url ? '' : `; stderr: ${server.err()}`}`);
  if (!url) return;
  const res = await fetch(`${url}/healthz`);
  t.equal(res.status, 200);
  server.child.kill('SIGTERM');
  t.equal(await server.exited, 0, 'SIGTERM shuts down cleanly');
});

t.test('every EVENTSTORE_URL the configuration accepts, the real client parses without a warning (which would print the password)', async (t) => {
  const { EventStoreDBClient } = await import('@eventstore/db-client');
  const urls = [
    'esdb://admin:s3cret@localhost:2113?tls=false&node_preference=Leader&keepAliveInterval=10000',
    'esdb://admin:s3cret@db:2113?tls=false&keepAliveInterval=-1&keepAliveTimeout=-1&throwOnAppendFailure=true',
    'esdb+discover://admin:s3cret@db:2113?dnsDiscover=true&tlsVerifyCert=true&defaultDeadline=5000',
  ];
  const warned: unknown[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warned.push(args);
  try {
    for (const url of urls) {
      t.equal(loadConfig({ EVENTSTORE_URL: url }).EVENTSTORE_URL, url);
      t.doesNotThrow(() => EventStoreDBClient.connectionString(url), url);
    }
  } finally {
    console.warn = warn;
  }
  t.same(warned, [], 'the client warned about nothing');
});
