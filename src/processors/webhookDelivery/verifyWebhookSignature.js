// Plain JavaScript (types in the .d.ts beside it): the package's export to receivers, importable on
// Node.js without a TypeScript loader.
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Reference verifier for receivers of the service's webhooks.
 *
 * `rawBody` must be the request body exactly as received (not re-serialised JSON); `header` is the
 * value of `Service-Signature` (`t=<unix seconds>,v1=<hex>`, possibly with several `v1` entries,
 * for example during a secret rotation). Returns true only when the header has a `t` and at least
 * one `v1`, the timestamp is within the tolerance, and one `v1` equals the HMAC-SHA256 of
 * `<t>.<rawBody>` keyed with `secret`; comparisons run in constant time. A `toleranceSeconds` that is
 * no number (NaN: an unset setting) or negative, or a `now` that is no time, rejects every header.
 * A `rawBody` that is neither a string nor bytes (parsed JSON, say) is a mistake in the caller's
 * code, not a bad request: it throws a TypeError saying so, whatever the header.
 */
export function verifyWebhookSignature(rawBody, header, secret, { toleranceSeconds = 300, now = Date.now() } = {}) {
  if (typeof rawBody !== 'string' && !ArrayBuffer.isView(rawBody)) {
    throw new TypeError(`verifyWebhookSignature: rawBody must be the request body exactly as received, a string or bytes (Buffer, Uint8Array), not ${rawBody === null ? 'null' : typeof rawBody === 'object' ? 'an object (parsed JSON?)' : typeof rawBody}`);
  }
  if (typeof header !== 'string' || header.length === 0 || header.length > 8192 || !secret) return false;
  let timestamp = null;
  const signatures = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== null) return false;
      timestamp = value;
    } else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === null || !/^\d{1,15}$/.test(timestamp) || signatures.length === 0) return false;
  const nowSeconds = (now instanceof Date ? now.getTime() : now) / 1000;
  // A tolerance or a clock that is no number (an unset setting read as NaN) accepts nothing: NaN compares false.
  if (!Number.isFinite(nowSeconds) || !(toleranceSeconds >= 0)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
  let ok = false;
  for (const candidate of signatures) {
    if (!/^[0-9a-f]{64}$/.test(candidate)) continue;
    // Check every candidate (no early exit) so timing does not reveal which one matched.
    if (timingSafeEqual(Buffer.from(candidate, 'hex'), expected)) ok = true;
  }
  return ok;
}
