import { createHmac } from 'node:crypto';
import t from 'tap';
// The package entry point, as a receiver would import it.
import { verifyWebhookSignature } from 'outreach-integration-service';

const secret = 'svc_wh_0123456789abcdef0123456789abcdef';
const body = '{"id":"outreach.reply_sent:1768478400000:abc","type":"outreach.reply_sent","data":{"x":"é"}}';
const now = 1_768_478_400_000;
const t0 = Math.floor(now / 1000);
const sign = (ts: number, raw: string | Buffer, key = secret) => createHmac('sha256', key).update(`${ts}.`).update(raw).digest('hex');

t.test('accepts a correct signature on the raw body (string or bytes)', async (t) => {
  const header = `t=${t0},v1=${sign(t0, body)}`;
  t.equal(verifyWebhookSignature(body, header, secret, { now }), true);
  t.equal(verifyWebhookSignature(Buffer.from(body), header, secret, { now }), true);
  t.equal(verifyWebhookSignature(new Uint8Array(Buffer.from(body)), header, secret, { now: new Date(now) }), true);
});

t.test('accepts a header with several v1 values when one matches', async (t) => {
  const header = `t=${t0},v1=${sign(t0, body, 'old-secret')},v1=${sign(t0, body)}`;
  t.equal(verifyWebhookSignature(body, header, secret, { now }), true);
  t.equal(verifyWebhookSignature(body, `t=${t0},v1=${sign(t0, body, 'a')},v1=${sign(t0, body, 'b')}`, secret, { now }), false);
});

t.test('rejects a header without t or without v1, or malformed', async (t) => {
  t.equal(verifyWebhookSignature(body, `v1=${sign(t0, body)}`, secret, { now }), false, 'no t');
  t.equal(verifyWebhookSignature(body, `t=${t0}`, secret, { now }), false, 'no v1');
  t.equal(verifyWebhookSignature(body, '', secret, { now }), false, 'empty');
  t.equal(verifyWebhookSignature(body, undefined, secret, { now }), false, 'missing');
  t.equal(verifyWebhookSignature(body, `t=abc,v1=${sign(t0, body)}`, secret, { now }), false, 'non-numeric t');
  t.equal(verifyWebhookSignature(body, `t=${t0},v1=${sign(t0, body).toUpperCase()}`, secret, { now }), false, 'not lowercase hex');
});

t.test('rejects a stale or far-future timestamp, honouring toleranceSeconds', async (t) => {
  const old = t0 - 301;
  t.equal(verifyWebhookSignature(body, `t=${old},v1=${sign(old, body)}`, secret, { now }), false, 'older than 300 s');
  t.equal(verifyWebhookSignature(body, `t=${old},v1=${sign(old, body)}`, secret, { now, toleranceSeconds: 600 }), true, 'within a wider tolerance');
  const edge = t0 - 300;
  t.equal(verifyWebhookSignature(body, `t=${edge},v1=${sign(edge, body)}`, secret, { now }), true, 'exactly at the tolerance');
  const future = t0 + 301;
  t.equal(verifyWebhookSignature(body, `t=${future},v1=${sign(future, body)}`, secret, { now }), false, 'too far in the future');
});

t.test('a tolerance or a clock that is no number accepts nothing (an unset setting read as NaN)', async (t) => {
  const old = t0 - 365 * 86_400;
  const header = `t=${old},v1=${sign(old, body)}`;
  t.equal(verifyWebhookSignature(body, header, secret, { now, toleranceSeconds: Number(undefined) }), false, 'a tolerance of NaN');
  t.equal(verifyWebhookSignature(body, header, secret, { now, toleranceSeconds: -1 }), false, 'a negative tolerance');
  t.equal(verifyWebhookSignature(body, `t=${t0},v1=${sign(t0, body)}`, secret, { now: new Date(Number.NaN) }), false, 'an invalid Date as the clock');
  t.equal(verifyWebhookSignature(body, `t=${t0},v1=${sign(t0, body)}`, secret, { now: new Date(now) }), true, 'a valid Date');
});

t.test('rejects a wrong secret, a changed body, and a re-serialised body', async (t) => {
  const header = `t=${t0},v1=${sign(t0, body)}`;
  t.equal(verifyWebhookSignature(body, header, secret + 'x', { now }), false);
  t.equal(verifyWebhookSignature(body.replace('é', 'e'), header, secret, { now }), false);
  t.equal(verifyWebhookSignature(JSON.stringify(JSON.parse(body), null, 2), header, secret, { now }), false);
  t.equal(verifyWebhookSignature(body, `t=${t0 + 1},v1=${sign(t0, body)}`, secret, { now }), false, 'timestamp is part of the signed string');
});

t.test('a body that is neither a string nor bytes (already parsed JSON) throws a TypeError that says so, whatever the header', async (t) => {
  const header = `t=${t0},v1=${sign(t0, body)}`;
  const verify = verifyWebhookSignature as (rawBody: unknown, header: string | undefined, secret: string, options?: { now?: number }) => boolean;
  for (const h of [header, undefined, 'junk']) {
    t.throws(() => verify(JSON.parse(body), h, secret, { now }), { name: 'TypeError', message: /rawBody must be the request body exactly as received.*parsed JSON/ });
  }
  t.throws(() => verify(null, header, secret, { now }), { name: 'TypeError', message: /not null$/ });
  t.throws(() => verify(42, header, secret, { now }), { name: 'TypeError', message: /not number$/ });
  t.equal(verify(new DataView(new Uint8Array(Buffer.from(body)).buffer), header, secret, { now }), true, 'any view of the bytes is bytes (a DataView)');
});

t.test('the package entry imports on plain Node.js, without a TypeScript loader', async (t) => {
  const { execFileSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const header = `t=${t0},v1=${sign(t0, body)}`;
  const script = `import { verifyWebhookSignature } from 'outreach-integration-service';
    process.stdout.write(JSON.stringify([verifyWebhookSignature(${JSON.stringify(body)}, ${JSON.stringify(header)}, ${JSON.stringify(secret)}, { now: ${now} }), verifyWebhookSignature(${JSON.stringify(body)}, ${JSON.stringify(header)}, 'other', { now: ${now} })]));`;
  // The package refers to itself by name from its own directory (package.json "exports"), as an installed one would.
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { PATH: process.env.PATH ?? '' }, // no NODE_OPTIONS: no tsx loader inherited from the test runner
    encoding: 'utf8',
  });
  t.same(JSON.parse(out), [true, false]);
});
