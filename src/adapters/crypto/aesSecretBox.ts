import { type KeyObject, createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SecretBox } from '../../ports/secretBox.ts';
import { StartupError } from '../../lifecycle/startupFailure.ts';

/** AES-256-GCM; sealed form `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export class AesSecretBox implements SecretBox {
  private readonly tagKeys = new Map<string, KeyObject>();

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('secret key must be 32 bytes');
  }

  tag(purpose: string, data: string): Buffer {
    let key = this.tagKeys.get(purpose);
    if (!key) {
      // HKDF (RFC 5869): one key per purpose, none of them the sealing key itself.
      key = createSecretKey(Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `outreach tag: ${purpose}`, 32)));
      this.tagKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(data, 'utf8').digest();
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** The configured key, or a key file created once under the data directory, readable by its owner only. */
export function loadOrCreateKey(configured: string | undefined, keyFile: string): Buffer {
  if (configured) return Buffer.from(configured, 'base64');
  if (existsSync(keyFile)) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (error) {
      throw new StartupError(`${keyFile} cannot be read as the secret key file: ${(error as Error).message}`);
    }
    const key = Buffer.from(text.trim(), 'base64');
    if (key.length !== 32) throw new StartupError(`${keyFile} does not hold a 32-byte base64 key`);
    return key;
  }
  mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // Written whole under a private name, then linked into place: another process starting at the
  // same moment either sees no key file or a complete one, never a half-written one.
  const staging = `${keyFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(staging, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(staging, keyFile);
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKey(undefined, keyFile);
    throw error;
  } finally {
    unlinkSync(staging);
  }
  return key;
}
