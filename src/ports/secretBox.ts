/** Seals secrets the service must use later but nobody may read back (webhook signing secrets). */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}
