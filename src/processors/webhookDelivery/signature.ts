import { type KeyObject, createHmac } from 'node:crypto';

/**
 * The service's signer: `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
 * The body given here is the exact byte sequence sent. The secret may come as a KeyObject made once
 * per subscription (`createSecretKey`), which spares the HMAC its key set-up on every attempt.
 */
export function signatureHeader(secret: string | KeyObject, body: Buffer, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/**
 * The header signed with several secrets: one `v1=` per secret, as during a secret rotation's grace
 * period (`t=<unix seconds>,v1=<new>,v1=<previous>`); a receiver accepts when any `v1` matches.
 */
export function signatureHeaderFor(secrets: readonly (string | KeyObject)[], body: Buffer, unixSeconds: number): string {
  const v1s = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex')}`);
  return `t=${unixSeconds},${v1s.join(',')}`;
}
