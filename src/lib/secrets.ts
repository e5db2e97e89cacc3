// Random secrets, their hashes and constant-time comparison. Secrets are stored only as hashes.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random secret with a readable prefix (`wsk_…`, `dxt_…`): 32 random bytes, base64url. */
export function randomSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of a high-entropy secret, hex. Such secrets need no slow hash: guessing is hopeless. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
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
