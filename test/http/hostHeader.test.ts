import { connect } from 'node:net';
import t from 'tap';
import { startTestApp } from '../helpers/testApp.ts';

// RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400. Node answered it itself, with an empty
// body; it is the service's envelope now, like every other error.
const app = await startTestApp({ listen: true });
t.teardown(() => app.close());
const { port } = new URL(app.url);

function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

t.test('an HTTP/1.1 request without Host: 400 VALIDATION_ERROR in the envelope', async (t) => {
  const answer = await raw('GET /api/v1/openapi.json HTTP/1.1\r\nConnection: close\r\n\r\n');
  t.match(answer, /^HTTP\/1\.1 400 /);
  t.match(answer, /x-request-id: [0-9a-f-]{36}/i);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  t.same(body, { error: { code: 'VALIDATION_ERROR', message: 'An HTTP/1.1 request needs a Host header.' } });
});

t.test("the service's refusals before any route carry X-Request-Id too (a charset, a bad URL)", async (t) => {
  t.match(await raw('POST /api/v1/sites/x/outreach/webhooks HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json; charset=latin1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'), /x-request-id: [0-9a-f-]{36}/i);
  t.match(await raw('GET /api/v1/sites/%zz/outreach/webhooks HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 [\s\S]*x-request-id: [0-9a-f-]{36}/i);
});

t.test('with Host, or HTTP/1.0 (which may omit it), the request is served', async (t) => {
  t.match(await raw('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 /);
  t.match(await raw('GET /healthz HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /);
});
