// Server-side console sessions. The cookie holds a random 32-byte token; the database holds its
// sha256 hash, so a leaked database copy cannot be replayed as cookies. A session ends after its
// lifetime's idle time without a request or its absolute time after sign-in, whichever comes first
// (CONSOLE_SESSION_IDLE_MINUTES, CONSOLE_SESSION_MAX_HOURS).
// CSRF tokens are synchronizer tokens bound to the session: an HMAC of the session token under
// the service's signing secret, recomputed and compared in constant time on every form post.
import { constantTimeEqual, hashSecret, hmac, randomSecret } from '../../lib/secrets.js';
import type { ConsoleAccountRow } from '../../storage/db/console-tables.js';
import type { SessionLifetime } from '../../config.js';
import type { ConsoleDb } from './db.js';

/** last_seen is written at most this often, so reading pages does not write on every request. */
const TOUCH_EVERY_MS = 60 * 1000;
const TOKEN_PREFIX = 'dxs_';

/** A signed-in session and its account. */
export interface ConsoleSession {
  account: ConsoleAccountRow;
  /** The session token from the cookie (never stored in clear). */
  token: string;
}

/** Opens a new session (a new id every sign-in: no fixation) and returns its token. */
export async function openSession(
  db: ConsoleDb,
  accountId: number,
  lifetime: SessionLifetime,
  now = Date.now(),
): Promise<string> {
  const token = randomSecret(TOKEN_PREFIX);
  await db
    .insertInto('console_sessions')
    .values({ id_hash: hashSecret(token), account_id: accountId, created_ms: now, last_seen_ms: now })
    .execute();
  // Expired sessions of anyone are swept here, so the table stays as small as the live sessions.
  await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([
        eb('last_seen_ms', '<=', now - lifetime.idleMs),
        eb('created_ms', '<=', now - lifetime.absoluteMs),
      ]),
    )
    .execute();
  return token;
}

/** The live session of a cookie token, or null (unknown, expired: an expired one is deleted). */
export async function findSession(
  db: ConsoleDb,
  token: string,
  lifetime: SessionLifetime,
  now = Date.now(),
): Promise<ConsoleSession | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const idHash = hashSecret(token);
  const row = await db
    .selectFrom('console_sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  if (row === undefined) return null;
  const lastSeen = Number(row.last_seen_ms);
  if (now - lastSeen >= lifetime.idleMs || now - Number(row.created_ms) >= lifetime.absoluteMs) {
    await endSession(db, token);
    return null;
  }
  const account = await db
    .selectFrom('console_accounts')
    .selectAll()
    .where('id', '=', row.account_id)
    .executeTakeFirst();
  if (account === undefined) return null;
  // Disabling ends the account's sessions; this holds even for one opened in the same instant.
  if (account.disabled_at !== null) {
    await endSession(db, token);
    return null;
  }
  if (now - lastSeen >= TOUCH_EVERY_MS)
    await db
      .updateTable('console_sessions')
      .set({ last_seen_ms: now })
      .where('id_hash', '=', idHash)
      .execute();
  return { account, token };
}

/** Ends a session (sign-out); unknown tokens are ignored. */
export async function endSession(db: ConsoleDb, token: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', hashSecret(token)).execute();
}

/**
 * Ends every session of an account (a password reset: whoever signed in with the old password is
 * out), or every one but `keep` (a password change: the person stays signed in where they are).
 */
export async function endSessionsOf(db: ConsoleDb, accountId: number, keep?: string): Promise<void> {
  let q = db.deleteFrom('console_sessions').where('account_id', '=', accountId);
  if (keep !== undefined) q = q.where('id_hash', '!=', hashSecret(keep));
  await q.execute();
}

/** The CSRF token of forms in a session (or of a pre-session cookie on the sign-in pages). */
export function csrfToken(secret: string, binding: string): string {
  return hmac(secret, `console-csrf:${binding}`);
}

/** True when a submitted CSRF token belongs to `binding` (constant-time compare). */
export function csrfTokenMatches(secret: string, binding: string, submitted: unknown): boolean {
  return typeof submitted === 'string' && constantTimeEqual(csrfToken(secret, binding), submitted);
}
