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
 * What a dashboard session records of the user it was signed in as: a digest of their password hash
 * and of how many times they signed out everywhere (`sessionEpoch`). The session holds only while both
 * are what they were, so a password changed (or taken away) or a Sign out everywhere ends every session
 * before it, one whose sign-in was under way at that moment too. Epoch 0 keeps the stamp sessions
 * recorded before there were epochs.
 */
export const passwordStamp = (passwordHash: string | null, sessionEpoch = 0) =>
  passwordHash === null ? null : sha256Hex(sessionEpoch === 0 ? `dashboard-session|${passwordHash}` : `dashboard-session|${passwordHash}|${sessionEpoch}`).slice(0, 32);

/** The stamp a session of this user (as the users read model has them) must carry. */
export const sessionStampOf = (user: { passwordHash: string | null; sessionEpoch?: number }) => passwordStamp(user.passwordHash, user.sessionEpoch ?? 0);

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
