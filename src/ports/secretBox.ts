/** Seals secrets the service must use later but nobody may read back (webhook signing secrets). */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
  /**
   * A keyed digest (HMAC-SHA-256 under a key derived for `purpose`) that only this service can
   * make: it recognises later, without storing anything, what it handed out (a bounce address).
   */
  tag(purpose: string, data: string): Buffer;
}
