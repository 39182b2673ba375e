import t from 'tap';
import { openSocket } from '../http/rawHttp.ts';
import { startTestApp } from '../helpers/testApp.ts';

/**
 * A request that reaches the server while it closes (the next one on a connection busy when the
 * close began) gets the service's 503: its envelope and Retry-After (fastify's own answer had neither).
 */
t.test('the next request on a connection busy when the close began: 503 SERVICE_UNAVAILABLE with Retry-After', async (t) => {
  const app = await startTestApp({ listen: true });
  const socket = await openSocket(app.url);
  t.teardown(() => socket.destroy());
  let raw = '';
  socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
  // A first request whose body is still arriving when the close begins, then a second on the same connection.
  const body = JSON.stringify({ label: 'x' });
  socket.write(`POST /api/v1/sites/x/outreach/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const closed = app.close();
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.write(`${body.slice(3)}GET /api/v1/sites/x/outreach/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await closed;
  const responses = raw.split(/(?=HTTP\/1\.1 )/);
  t.equal(responses.length, 2, raw);
  t.match(responses[0], /^HTTP\/1\.1 401/, 'the first was answered as usual');
  t.match(responses[1], /^HTTP\/1\.1 503/);
  t.match(responses[1], /\r\nretry-after: 1\r\n/i);
  t.match(responses[1], /"code":"SERVICE_UNAVAILABLE"/);
});
