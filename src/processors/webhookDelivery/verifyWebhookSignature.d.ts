export interface VerifyOptions {
  /** Maximum age (and clock skew into the future) of the signature timestamp, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time: epoch milliseconds or a Date. Default: now. */
  now?: number | Date;
}

/**
 * Reference verifier for receivers of the service's webhooks: true only when `header`
 * (`Service-Signature`) has a `t` within the tolerance and a `v1` that is the HMAC-SHA256 of
 * `<t>.<rawBody>` keyed with `secret` (see verifyWebhookSignature.js). Throws a TypeError when
 * `rawBody` is neither a string nor bytes (parsed JSON, say).
 */
export function verifyWebhookSignature(rawBody: string | Uint8Array, header: string | null | undefined, secret: string, options?: VerifyOptions): boolean;
