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
