/**
 * Outbound requests a tenant or an anonymous caller can cause, at their limits, against real local
 * HTTPS peers: no socket outlives its fetch's timeout, a typo in an allow-list allows nothing more,
 * the special IPv6 ranges are refused, and an anonymous caller learns nothing of internal DNS.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { ClientMetadataFetcher } from '../../src/adapters/http/clientMetadataFetcher.ts';
import { SafePageFetcher } from '../../src/adapters/http/safePageFetcher.ts';
import { loadConfig } from '../../src/config.ts';
import { parseAllowedRanges, refusalReason } from '../../src/domain/destination.ts';
import { WebhookSender } from '../../src/processors/webhookDelivery/sender.ts';
import { testCertificate } from '../webhooks/helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An HTTPS peer on 127.0.0.1 that answers `status` at once, then trickles its body one byte every 250 ms, forever. */
async function startTrickler(status: number, contentType = 'application/json') {
  const { cert, key } = await testCertificate();
  const sockets = new Set<Socket>();
  const state = { bytesSent: 0, openSockets: () => [...sockets].filter((s) => !s.destroyed).length };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer({ cert, key }, (req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.flushHeaders();
    const timer = setInterval(() => {
      if (res.destroyed || res.socket?.destroyed) return clearInterval(timer);
      res.write('x');
      state.bytesSent += 1;
    }, 250);
    timers.add(timer);
  });
  server.on('secureConnection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    state,
    async close() {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const TIMEOUT_MS = 1000;

t.test('client metadata fetch (anonymous, /oauth/authorize): a non-200 answer with an endless trickling body does not keep the socket past the timeout', async (t) => {
  const { caFile } = await testCertificate();
  const fetcher = new ClientMetadataFetcher({ allowed: parseAllowedRanges('127.0.0.1/32'), extraCa: readFileSync(caFile, 'utf8'), timeoutMs: TIMEOUT_MS });
  t.teardown(() => fetcher.close());
  const trickled = await startTrickler(200, 'application/json');
  await t.rejects(fetcher.load(`${trickled.origin}/client.json`), { name: 'ClientMetadataError', unreachable: true, message: /no answer within the timeout/ }, 'a JSON body trickled past the timeout: no answer (not a crash)');
  await trickled.close();
  for (const [label, status, type] of [['404', 404, 'application/json'], ['302', 302, 'application/json'], ['200 text/html', 200, 'text/html']] as const) {
    const peer = await startTrickler(status, type);
    const started = Date.now();
    await t.rejects(fetcher.load(`${peer.origin}/client-${status}.json`), /HTTP|not application\/json/, `${label}: refused`);
    t.ok(Date.now() - started < TIMEOUT_MS, `${label}: the refusal itself is quick`);
    await sleep(4 * TIMEOUT_MS);
    // Intended: nothing of this fetch outlives OAUTH_CLIENT_METADATA_TIMEOUT_MS.
    t.equal(peer.state.openSockets(), 0, `${label}: the connection is closed 4x the timeout later (bytes still being read: ${peer.state.bytesSent})`);
    await peer.close();
  }
});

t.test('webhook delivery: a 200 with an endless trickling body does not keep the pooled socket busy past the attempt\'s bound', async (t) => {
  const { caFile } = await testCertificate();
  const sender = new WebhookSender({ allowed: parseAllowedRanges('127.0.0.0/8'), extraCa: readFileSync(caFile, 'utf8'), timeoutMs: TIMEOUT_MS, connectionsPerOrigin: 2 });
  t.teardown(() => sender.destroy());
  const peer = await startTrickler(200);
  t.teardown(() => peer.close());
  const outcome = await sender.send(`${peer.origin}/hook`, Buffer.from('{}'), { 'content-type': 'application/json' });
  t.equal(outcome.status, 'ok');
  await sleep(4 * TIMEOUT_MS);
  t.equal(peer.state.openSockets(), 0, `the connection is released within the attempt timeout (bytes still being read: ${peer.state.bytesSent})`);
});

t.test('page fetcher (control): the whole fetch, body included, is bounded by its timeout', async (t) => {
  const { caFile } = await testCertificate();
  const fetcher = new SafePageFetcher({ allowed: parseAllowedRanges('127.0.0.0/8'), extraCa: readFileSync(caFile, 'utf8'), timeoutMs: TIMEOUT_MS, maxBytes: 1_000_000 });
  t.teardown(() => fetcher.close());
  const peer = await startTrickler(200, 'text/html');
  t.teardown(() => peer.close());
  await t.rejects(fetcher.fetch(`${peer.origin}/`), /no complete answer within/);
  await sleep(TIMEOUT_MS);
  t.equal(peer.state.openSockets(), 0, 'closed');
});

t.test('allowed-range parsing: a prefix is digits after one slash; "10.20.0.0/" (read as /0 it allowed every address) is refused at start', async (t) => {
  for (const [name, value] of [
    ['WEBHOOK_ALLOWED_RANGES', '10.20.0.0/'],
    ['OAUTH_CLIENT_METADATA_ALLOWED_RANGES', 'fd12::/'],
    ['WEBHOOK_ALLOWED_RANGES', '10.0.0.0/8/9'],
    ['WEBHOOK_ALLOWED_RANGES', '10.0.0.0/0x8'],
    ['WEBHOOK_ALLOWED_RANGES', '10.0.0.0/8.0'],
    ['WEBHOOK_ALLOWED_RANGES', '10.0.0.0/1e1'],
  ] as const) {
    t.throws(() => loadConfig({ [name]: value }), new RegExp(`${name}: must be a comma-separated list of CIDR ranges`), `${name}=${value}`);
  }
  const allowed = parseAllowedRanges('10.20.0.0/16, 127.0.0.1');
  t.equal(refusalReason('10.20.3.4', allowed), null, 'the range meant');
  t.equal(refusalReason('127.0.0.1', allowed), null, 'a bare address is its /32');
  t.equal(refusalReason('169.254.169.254', allowed), 'link_local', 'nothing else');
});

t.test('refused ranges: IPv6 documentation (3fff::/20, RFC 9637), benchmarking (2001:2::/48) and SRv6 (5f00::/16) are refused', async (t) => {
  t.equal(refusalReason('3fff::1'), 'reserved', '3fff::/20 documentation');
  t.equal(refusalReason('2001:2::1'), 'reserved', '2001:2::/48 benchmarking (its IPv4 twin 198.18/15 is refused)');
  t.equal(refusalReason('5f00::1'), 'reserved', '5f00::/16 SRv6 SIDs');
});

t.test('anonymous /oauth/authorize and /oauth/token do not tell what an arbitrary host name resolves to (no internal DNS oracle)', async (t) => {
  const { startTestApp } = await import('../helpers/testApp.ts');
  const app = await startTestApp({ env: { OAUTH_CLIENT_METADATA_ALLOWED_RANGES: '' } });
  t.teardown(() => app.close());
  const page = async (clientId: string) => {
    const res = await app.fastify.inject({ method: 'GET', url: `/oauth/authorize?response_type=code&client_id=${encodeURIComponent(clientId)}` });
    return /The app&#39;s client metadata document[^<]*/.exec(res.body)?.[0] ?? `no message in: ${res.body}`;
  };
  const internal = await page('https://localhost/client.json');
  const missing = await page('https://no-such-host.invalid/client.json');
  t.comment(`internal name: ${internal}`);
  t.comment(`missing name:  ${missing}`);
  t.equal(internal, missing, 'an anonymous caller cannot tell a name resolving to an internal address from a name that does not exist');
  t.equal(internal, "The app&#39;s client metadata document could not be fetched.");
  for (const clientId of ['https://localhost/client.json', 'https://no-such-host.invalid/client.json']) {
    const res = await app.fastify.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'authorization_code', client_id: clientId, code: 'x', redirect_uri: 'http://127.0.0.1/cb', code_verifier: 'v'.repeat(43) } });
    t.same(res.json(), { error: 'invalid_client', error_description: 'The client metadata document could not be fetched.' }, `the token endpoint tells as little (${clientId})`);
  }
});
