// Signs app JWTs the way partners' clients do: for the CLI's `token` helper and for tests.
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { nowSeconds } from '../../lib/time.js';

export interface SignOptions {
  appId: string;
  privateKeyPem: string;
  kid?: string;
  /** Lifetime in seconds; the service accepts at most 3600. */
  ttlSeconds?: number;
  audience?: string;
  /** Issued-at override (seconds), for tests of clock handling. */
  issuedAt?: number;
}

/** Signs an app JWT; the algorithm follows the key (RSA → RS256, EC P-256 → ES256). */
export async function signAppJwt(options: SignOptions): Promise<string> {
  const key = createPrivateKey(options.privateKeyPem);
  const alg = key.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
  const iat = options.issuedAt ?? nowSeconds();
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg, typ: 'JWT', ...(options.kid !== undefined ? { kid: options.kid } : {}) })
    .setIssuer(options.appId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.ttlSeconds ?? 3600));
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
  return jwt.sign(key);
}
