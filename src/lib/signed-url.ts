// URLs signed by the service itself (embedded object store): HMAC over method, path and expiry.
// The signature lives in the query, so logs (which drop query values) never show it.
import { constantTimeEqual, hmac } from './secrets.js';

/** The outcome of checking a signed URL. */
export type SignatureCheck = 'valid' | 'expired' | 'invalid';

function message(method: string, path: string, expires: number): string {
  return `dx-signed-url/v1\n${method.toUpperCase()}\n${path}\n${expires}`;
}

/** Signs `method path` until `expiresAt` (epoch seconds); returns the full URL. */
export function signUrl(
  secret: string,
  baseUrl: string,
  method: string,
  path: string,
  expiresAt: number,
): string {
  const sig = hmac(secret, message(method, path, expiresAt));
  return `${baseUrl}${path}?expires=${expiresAt}&signature=${sig}`;
}

/** Checks the query of a signed URL; a bad signature is reported before an expiry. */
export function checkSignedUrl(
  secret: string,
  method: string,
  path: string,
  query: { expires?: unknown; signature?: unknown },
  nowSeconds: number,
): SignatureCheck {
  const { expires, signature } = query;
  if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string')
    return 'invalid';
  const expected = hmac(secret, message(method, path, Number(expires)));
  if (!constantTimeEqual(expected, signature)) return 'invalid';
  return Number(expires) < nowSeconds ? 'expired' : 'valid';
}
