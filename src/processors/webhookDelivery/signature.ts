import { createHmac } from 'node:crypto';

/**
 * The service's signer: `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
 * The body given here is the exact byte sequence sent.
 */
export function signatureHeader(secret: string, body: Buffer, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
