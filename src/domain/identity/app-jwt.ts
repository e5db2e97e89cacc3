// Verifies the app's own JWT ("system-level JWT"): signed with one of the app's registered keys.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { AppKeyRow, AppRow } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { nowSeconds, nowTimestamp } from '../../lib/time.js';
import { activeAppKeys } from './apps.js';
import type { CredentialCache, UnderEpoch } from './credential-cache.js';
import { hashSecret } from '../../lib/secrets.js';
import type { Db } from './users.js';

export const MAX_JWT_LIFETIME_SECONDS = 3600;
export const CLOCK_SKEW_SECONDS = 60;

export interface AppJwtOptions {
  /** When set, an `aud` claim present in the token must equal it. */
  audience: string | null;
}

const unauthenticated = (detail: string) => problem('unauthenticated', detail, { code: 'app_jwt_invalid' });

// Parsed public keys, by key id; a key's PEM never changes once stored, so the cache needs no expiry.
const keyCache = new Map<string, KeyObject>();
function publicKeyOf(row: AppKeyRow): KeyObject {
  let key = keyCache.get(row.kid);
  if (key === undefined) {
    key = createPublicKey(row.public_key_pem);
    keyCache.set(row.kid, key);
  }
  return key;
}

/** A verified app JWT: the app, and the key that signed it. */
export interface VerifiedAppJwt {
  app: AppRow;
  kid: string;
}

/** The times of a verified JWT, checked again against the clock on every use. */
interface JwtTimes {
  iat: number;
  exp: number;
  nbf: number | undefined;
}

/** App JWTs verified under an identity epoch (hashed JWT → its app, key and times). */
export type AppJwtCache = CredentialCache<{ verified: VerifiedAppJwt; times: JwtTimes }>;

/**
 * Verifies an app JWT; any defect answers 401 with the reason. With `cached`, a JWT already verified
 * under the identity epoch read before this call (its app and keys unchanged since) skips the signature check;
 * its times are held to the clock as on the first use.
 */
export async function verifyAppJwt(
  db: Db,
  token: string,
  options: AppJwtOptions,
  cached?: UnderEpoch<AppJwtCache>,
): Promise<VerifiedAppJwt> {
  if (cached === undefined) return (await verifySigned(db, token, options)).verified;
  const key = hashSecret(token);
  // The epoch was read before verifying: a change after that read bumps it past the one kept.
  const { cache, epoch } = cached;
  const hit = cache.get(key, epoch);
  if (hit !== undefined) {
    checkTimes(hit.times, nowSeconds());
    // As jose's own check on first use (with the same tolerance), now that it is skipped.
    if (hit.times.exp <= nowSeconds() - CLOCK_SKEW_SECONDS) throw unauthenticated('The JWT has expired.');
    return hit.verified;
  }
  const verified = await verifySigned(db, token, options);
  cache.set(key, epoch, verified);
  await noteKeyUse(db, verified.verified.kid);
  return verified.verified;
}

/** A key's use is written at most this often per process: clients that sign a JWT per request
 * would otherwise add a write to every request. */
const KEY_USE_EVERY_MS = 60_000;
const keyUseWritten = new Map<string, number>();

/**
 * Records when the key last signed a JWT verified here: at a JWT's first use in a process (then
 * the JWT is kept), and at most once a minute per key, so "last used" is right to the minute.
 */
async function noteKeyUse(db: Db, kid: string): Promise<void> {
  const now = Date.now();
  if (now - (keyUseWritten.get(kid) ?? -Infinity) < KEY_USE_EVERY_MS) return;
  keyUseWritten.set(kid, now);
  const at = nowTimestamp();
  await db
    .insertInto('app_key_uses')
    .values({ kid, last_used_at: at })
    .onConflict((oc) => oc.column('kid').doUpdateSet({ last_used_at: at }))
    .execute();
}

/** Decodes, checks and verifies the signature of an app JWT against the app's active keys. */
async function verifySigned(
  db: Db,
  token: string,
  options: AppJwtOptions,
): Promise<{ verified: VerifiedAppJwt; times: JwtTimes }> {
  let issuer: unknown;
  let kid: string | undefined;
  let claims: ReturnType<typeof decodeJwt>;
  try {
    kid = decodeProtectedHeader(token).kid;
    claims = decodeJwt(token);
    issuer = claims.iss;
  } catch {
    throw unauthenticated('The bearer token is not a well-formed JWT.');
  }
  if (typeof issuer !== 'string' || issuer === '')
    throw unauthenticated('The JWT has no iss claim (platformAppId).');
  const app = await db.selectFrom('apps').selectAll().where('id', '=', issuer).executeTakeFirst();
  if (app === undefined) throw unauthenticated('The JWT was issued by an unknown app.');
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') {
    throw unauthenticated('The JWT must carry iat and exp claims.');
  }
  if (claims.exp - claims.iat > MAX_JWT_LIFETIME_SECONDS) {
    throw unauthenticated(`The JWT lives longer than ${MAX_JWT_LIFETIME_SECONDS} seconds (exp - iat).`);
  }
  const times: JwtTimes = { iat: claims.iat, exp: claims.exp, nbf: claims.nbf };
  checkTimes(times, nowSeconds());

  const keys = (await activeAppKeys(db, app.id)).filter((k) => kid === undefined || k.kid === kid);
  if (keys.length === 0) throw unauthenticated('No active key of this app matches the JWT (kid).');
  let lastError: unknown;
  for (const key of keys) {
    try {
      await jwtVerify(token, publicKeyOf(key), {
        algorithms: [key.alg],
        issuer: app.id,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['iss', 'iat', 'exp'],
        ...(options.audience !== null && claims.aud !== undefined ? { audience: options.audience } : {}),
      });
      return { verified: { app, kid: key.kid }, times };
    } catch (err) {
      lastError = err;
    }
  }
  throw unauthenticated(describeJoseError(lastError));
}

/**
 * exp - iat alone would let a JWT dated years ahead work until then: every instant is also held to
 * the server's clock.
 */
function checkTimes(times: JwtTimes, now: number): void {
  for (const claim of ['iat', 'nbf'] as const) {
    const value = times[claim];
    if (typeof value === 'number' && value > now + CLOCK_SKEW_SECONDS) {
      throw unauthenticated(
        `The JWT claim ${claim} (${value}) lies in the future; the server time is ${now}.`,
      );
    }
  }
  if (times.exp > now + MAX_JWT_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) {
    throw unauthenticated(
      `The JWT claim exp (${times.exp}) is more than ${MAX_JWT_LIFETIME_SECONDS} seconds after the server time ${now}.`,
    );
  }
}

function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'The JWT has expired.';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `The JWT claim ${err.claim} is not valid: ${err.reason}.`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed)
    return 'The JWT is signed with an algorithm its key does not allow.';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'The JWT signature does not verify.';
  return 'The JWT is not valid.';
}
