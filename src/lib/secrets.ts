// Random secrets, their hashes and constant-time comparison. Secrets are stored only as hashes, or
// sealed (AES-256-GCM) when the service itself must read them back for a while.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hash,
  hkdfSync,
  randomBytes,
  randomFillSync,
  timingSafeEqual,
} from 'node:crypto';

/** Random bytes drawn from the system's CSPRNG a pool at a time (as Node's randomUUID does): one
 * call into OpenSSL per 128 secrets instead of one per secret, which a token mint felt. */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** 32 random bytes as base64url; the pool's bytes are wiped once read. */
function randomBase64url32(): string {
  if (poolAt + 32 > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = pool.subarray(poolAt, poolAt + 32);
  poolAt += 32;
  const text = bytes.toString('base64url');
  bytes.fill(0);
  return text;
}

/** A random secret with a readable prefix (`wsk_…`, `dxt_…`): 32 random bytes, base64url. */
export function randomSecret(prefix: string): string {
  return `${prefix}${randomBase64url32()}`;
}

/** SHA-256 of a high-entropy secret, hex. Such secrets need no slow hash: guessing is hopeless. */
export function hashSecret(secret: string): string {
  // The one-shot form: no Hash object per call (every authenticated request hashes its credential).
  return hash('sha256', secret, 'hex');
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** True when `secret` hashes to `expectedHash`, compared in constant time. */
export function secretMatchesHash(secret: string, expectedHash: string): boolean {
  return constantTimeEqual(hashSecret(secret), expectedHash);
}

/** HMAC-SHA256 of a message, base64url: the signature of signed URLs. */
export function hmac(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('base64url');
}

/** A 32-byte key for one purpose, derived from a service secret (HKDF-SHA256): a key for one
 * use never serves another, and the secret itself never becomes an encryption key. */
export function deriveKey(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', purpose, 32));
}

const SEALED_PREFIX = 'v1:';

/** AES-256-GCM of `plain`, bound to `context` (authenticated, not stored): `v1:` + base64url of
 * IV, tag and ciphertext. Opening it under another context, or after a change, fails. */
export function seal(key: Buffer, plain: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** True when `value` was made by {@link seal}. */
export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

/** The text {@link seal} sealed, or null when the key or context differ or it was altered. */
export function unseal(key: Buffer, sealed: string, context: string): string | null {
  if (!isSealed(sealed)) return null;
  const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
  if (raw.length < 28) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
