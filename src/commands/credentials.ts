import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** `svc_` + 64 lowercase hex characters from the CSPRNG. */
export const generateApiKey = () => `svc_${randomBytes(32).toString('hex')}`;
/** `svc_wh_` + 32 random bytes (base64url). */
export const generateWebhookSecret = () => `svc_wh_${randomBytes(32).toString('base64url')}`;
export const randomToken = (bytes = 16) => randomBytes(bytes).toString('hex');

export const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * What a dashboard session records of the password it was signed in with: a digest of its hash. The
 * session holds only while the user's password is that one, so a password changed (or taken away)
 * ends every session signed in with the old one, one whose check was under way at that moment too.
 */
export const passwordStamp = (passwordHash: string | null) => (passwordHash === null ? null : sha256Hex(`dashboard-session|${passwordHash}`).slice(0, 32));

/** scrypt, encoded as `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = encoded.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(actual, expected);
}
