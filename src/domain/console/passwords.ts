// Passwords, hashed with scrypt from node:crypto (memory-hard, no native dependency to build).
// Parameters: N = 2^15, r = 8, p = 1 (about 32 MiB and tens of milliseconds per hash, OWASP's
// minimum for scrypt), a 16-byte random salt, a 32-byte key. They are stored with each hash
// (`scrypt$15$8$1$salt$key`, base64url), so raising them later leaves old hashes readable.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/** The shortest password accepted: long passphrases beat composition rules (NIST SP 800-63B). */
export const MIN_PASSWORD_LENGTH = 12;
/** The longest: bounds the work an attacker can make one sign-in do. */
export const MAX_PASSWORD_LENGTH = 256;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** logN;
  // scrypt needs 128·N·r bytes; Node's default cap (32 MiB) is just below that at these parameters.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (err, key) =>
      err !== null ? reject(err) : resolve(key),
    );
  });
}

/** Why a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  return null;
}

/** Hashes a password with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, LOG_N, R, P);
  return ['scrypt', LOG_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash of no password: checked against when the account is unknown, so timing tells nothing. */
let decoy: Promise<string> | null = null;

/** True when `password` matches `stored` (constant-time compare); a null hash checks the decoy. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const hash = stored ?? (await (decoy ??= hashPassword(randomBytes(16).toString('hex'))));
  const parts = hash.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await derive(password, salt, logN, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected) && stored !== null;
}
