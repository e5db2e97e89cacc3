// App JWTs: the app's own credential, signed with its private key (RS256 for RSA keys, ES256 for
// EC P-256), as `dx token` and partners' clients sign them. They live at most an hour.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/** A PEM private key (PKCS#8 or PKCS#1/SEC1), or a key object made from one. */
export type PrivateKeyInput = string | KeyObject;

export interface AppJwtOptions {
  /** The app's platformAppId (the `iss` claim). */
  appId: string;
  privateKey: PrivateKeyInput;
  /** The key's id (header `kid`); without it the service tries each active key of the app. */
  keyId?: string;
  /** Lifetime in seconds, 1 to 3600 (the service refuses longer); default 300. */
  ttlSeconds?: number;
  /** The `aud` claim, for a service configured with JWT_AUDIENCE. */
  audience?: string;
  /** Issued-at in epoch seconds; default now. */
  issuedAt?: number;
}

/** The longest app JWT the service accepts (exp - iat). */
export const MAX_APP_JWT_TTL_SECONDS = 3600;

/** Signs an app JWT; the algorithm follows the key (RSA → RS256, EC P-256 → ES256). */
export async function signAppJwt(options: AppJwtOptions): Promise<string> {
  const ttl = options.ttlSeconds ?? 300;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_APP_JWT_TTL_SECONDS)
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_APP_JWT_TTL_SECONDS} (got ${ttl})`);
  const key =
    typeof options.privateKey === 'string' ? createPrivateKey(options.privateKey) : options.privateKey;
  const alg = key.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
  const iat = options.issuedAt ?? Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg, typ: 'JWT', ...(options.keyId !== undefined ? { kid: options.keyId } : {}) })
    .setIssuer(options.appId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttl);
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
  return jwt.sign(key);
}
