// Secrets the service must read back (a webhook's signing secret: the HMAC needs it), sealed at
// rest with AES-256-GCM under a key derived from SIGNING_SECRET. The database alone reveals none of
// them; rotating SIGNING_SECRET makes them unreadable (the apps set their webhooks again).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** A 256-bit key for one purpose, derived from the service's signing secret. */
export function derivedKey(signingSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', signingSecret, '', `dx sealed ${purpose}`, 32));
}

/** Seals `plaintext`: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** Opens what `seal` made with the same key; throws when the key differs or the text was altered. */
export function unseal(key: Buffer, sealed: string): string {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || ct === undefined) {
    throw new Error('not a sealed secret');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
