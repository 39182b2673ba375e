import t from 'tap';
import type { Socket } from 'node:net';
import { expectError, webhooksPath } from '../helpers/http.ts';
import { createTenant, startTestApp, type TestApp } from '../helpers/testApp.ts';
import { hostPort, openSocket, parseResponse, rawRequest, type RawResponse } from './rawHttp.ts';

// Small bounds so the test is quick; the defaults are 30 s (request), 10 s (headers), 5 s (keep-alive).
const BOUNDS = { HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_KEEP_ALIVE_TIMEOUT_MS: '500' };
// Node checks the bounds every quarter of the header timeout (here 125 ms); allow for a loaded machine.
const SLACK_MS = 700;

interface SlowClient {
  socket: Socket;
  openedAt: number;
  /** When the server closed the connection (ms since opening), once it has. */
  closedAfter: Promise<number>;
  /** What the server wrote before closing, if anything. */
  response(): RawResponse | null;
  stop(): void;
}

/**
 * An unauthenticated `POST /oauth/token` whose headers are complete (`Content-Length: 1000`) and
 * whose body trickles in one byte every 100 ms, so the connection is never idle; with `trickle:
 * false`, the body stops after its first bytes and the connection stays silent.
 */
async function slowBodyClient(app: TestApp, { trickle = true } = {}): Promise<SlowClient> {
  const { host, port } = hostPort(app.url);
  const socket = await openSocket(app.url);
  const openedAt = Date.now();
  let raw = '';
  socket.on('data', (c: Buffer) => (raw += c.toString('latin1')));
  socket.on('error', () => {});
  const closedAfter = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - openedAt)));
  socket.write(`POST /oauth/token HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=`);
  const timer = trickle ? setInterval(() => socket.writable && socket.write('a'), 100) : undefined;
  socket.once('close', () => clearInterval(timer));
  return { socket, openedAt, closedAfter, response: () => parseResponse(raw), stop: () => (clearInterval(timer), socket.destroy()) };
}

/** Retries a one-shot request (a fresh connection each time) until it is answered; resolves with the answer and the time it took. */
async function answeredWithin(app: TestApp, request: string, deadlineMs: number): Promise<{ res: RawResponse; ms: number; tries: number }> {
  const started = Date.now();
  let tries = 0;
  for (;;) {
    tries++;
    try {
      const res = await rawRequest(app.url, request, Math.max(100, deadlineMs - (Date.now() - started)));
      return { res, ms: Date.now() - started, tries };
    } catch (error) {
      if (Date.now() - started > deadlineMs) throw new Error(`not answered within ${deadlineMs} ms after ${tries} tries: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const get = (app: TestApp, path: string, headers: Record<string, string> = {}) => {
  const { host, port } = hostPort(app.url);
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n${lines}Connection: close\r\n\r\n`;
};

t.test('a slow body is cut off within the request timeout, with 408 in the envelope', async (t) => {
  const app = await startTestApp({ listen: true, env: BOUNDS });
  t.teardown(() => app.close());
  const client = await slowBodyClient(app);
  const closedAfter = await Promise.race([client.closedAfter, new Promise<number>((r) => setTimeout(() => r(-1), 5_000))]);
  client.stop();
  t.ok(closedAfter > 0, `the server closed the connection (after ${closedAfter} ms)`);
  t.ok(closedAfter >= 900 && closedAfter <= 1000 + SLACK_MS, `within the 1000 ms bound (${closedAfter} ms)`);
  const res = client.response();
  t.ok(res, 'an answer was written before closing');
  if (res) expectError(t, res, 408, 'REQUEST_TIMEOUT');
});

t.test('a body that stops arriving is answered 408 too, not just closed (the socket idle timeout came first)', async (t) => {
  const app = await startTestApp({ listen: true, env: BOUNDS });
  t.teardown(() => app.close());
  const client = await slowBodyClient(app, { trickle: false });
  const after = await Promise.race([client.closedAfter, new Promise<number>((r) => setTimeout(() => r(-1), 5_000))]);
  client.stop();
  t.ok(after > 0 && after <= 1000 + SLACK_MS + 1000, `closed soon after the 1000 ms bound (${after} ms)`);
  const res = client.response();
  t.ok(res, 'an answer was written before closing');
  if (res) expectError(t, res, 408, 'REQUEST_TIMEOUT');
});

t.test('headers that never complete are cut off within the header timeout', async (t) => {
  const app = await startTestApp({ listen: true, env: BOUNDS });
  t.teardown(() => app.close());
  const socket = await openSocket(app.url);
  const openedAt = Date.now();
  socket.on('error', () => {});
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  const trickle = setInterval(() => socket.writable && socket.write('X-A: b\r\n'), 100);
  const closedAfter = await new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - openedAt)));
  clearInterval(trickle);
  t.ok(closedAfter <= 500 + SLACK_MS, `closed after ${closedAfter} ms (bound 500 ms)`);
});

t.test('slow clients below the connection cap do not delay anyone: /healthz and an authenticated request answer at once', async (t) => {
  const app = await startTestApp({ listen: true, env: { ...BOUNDS, HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_MAX_CONNECTIONS: '1000' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const flood = await Promise.all(Array.from({ length: 300 }, () => slowBodyClient(app)));
  t.teardown(() => flood.forEach((c) => c.stop()));
  await new Promise((r) => setTimeout(r, 200));
  // The bounds leave room for a loaded CI machine; unloaded, both answer in a few milliseconds.
  const health = await answeredWithin(app, get(app, '/healthz'), 3_000);
  t.equal(health.res.statusCode, 200, `/healthz answered in ${health.ms} ms with 300 slow bodies open`);
  t.equal(health.tries, 1, 'at the first try');
  const list = await answeredWithin(app, get(app, webhooksPath(tenant.siteId), { Authorization: `Bearer ${tenant.key}` }), 3_000);
  t.equal(list.res.statusCode, 200, `the authenticated list answered in ${list.ms} ms`);
  const stillOpen = flood.filter((c) => !c.socket.destroyed).length;
  t.equal(stillOpen, 300, 'the slow bodies were all still open (under their 5 s bound)');
});

t.test('a flood past the connection cap: the excess is refused at once, the slow ones are cut at the bound, and /healthz answers soon after', async (t) => {
  // A 2 s request bound here, so "refused at once" (well under 2 s) and "cut at the bound" stay apart on a loaded machine.
  const app = await startTestApp({ listen: true, env: { ...BOUNDS, HTTP_REQUEST_TIMEOUT_MS: '2000', HTTP_MAX_CONNECTIONS: '50' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const floodStarted = Date.now();
  const flood = await Promise.all(Array.from({ length: 300 }, () => slowBodyClient(app)));
  t.teardown(() => flood.forEach((c) => c.stop()));
  // Over the cap node closes a new socket as soon as it is accepted, instead of holding a file descriptor for it.
  await new Promise((r) => setTimeout(r, 1_000));
  const refused = flood.filter((c) => c.socket.destroyed || c.socket.readableEnded).length;
  t.ok(refused >= 240, `${refused} of 300 connections past the cap of 50 were closed within 1 s (the held ones last until the 2 s bound)`);
  // The held ones are slow bodies: each is cut at the 2 s request bound, which frees the cap for others.
  const health = await answeredWithin(app, get(app, '/healthz'), 4_000);
  t.equal(health.res.statusCode, 200, `/healthz answered ${Date.now() - floodStarted} ms after the flood began (${health.tries} tries)`);
  const list = await answeredWithin(app, get(app, webhooksPath(tenant.siteId), { Authorization: `Bearer ${tenant.key}` }), 4_000);
  t.equal(list.res.statusCode, 200, 'and so did an authenticated request');
  t.ok(Date.now() - floodStarted <= 4_500, `both within 4.5 s of the flood (${Date.now() - floodStarted} ms)`);
  const closed = await Promise.all(flood.map((c) => c.closedAfter));
  t.ok(Math.max(...closed) <= 2000 + SLACK_MS, `every flood connection was closed by the server within the bound (slowest ${Math.max(...closed)} ms)`);
});
