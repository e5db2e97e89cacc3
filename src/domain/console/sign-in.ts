// Sign-in with email and password, rate limited per email+IP. The failure counts live in the
// database (console_sign_in_failures), not in memory: every API instance on the database shares
// them and a restart does not reset them; rows are one per email+IP, removed on success and
// swept once their window has passed, so the table stays bounded by recent attackers.
import { problem } from '../../errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { audit } from './audit.js';
import type { ConsoleDb } from './db.js';
import { verifyPassword } from './passwords.js';
import type { SessionLifetime } from '../../config.js';
import { openSession } from './sessions.js';

/** Failures allowed per email+IP within the window before sign-in is refused (429). */
export const SIGN_IN_MAX_FAILURES = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;

/** A successful sign-in: the new session's token. */
export interface SignedIn {
  token: string;
  accountId: number;
}

function limitKey(email: string, ip: string): string {
  // Hashed: the table then holds no email addresses or IPs in clear.
  return hashSecret(`${email}\n${ip}`);
}

/**
 * Refuses (429) when email+IP has used up its failures in the window; otherwise tells whether a
 * counting window is open. Every password typed in the console goes through it: sign-in, and the
 * current password on the account page.
 */
export async function refuseWhenLimited(
  db: ConsoleDb,
  input: { email: string; ip: string },
  now: number,
): Promise<boolean> {
  const counted = await db
    .selectFrom('console_sign_in_failures')
    .selectAll()
    .where('key', '=', limitKey(input.email, input.ip))
    .executeTakeFirst();
  const inWindow = counted !== undefined && now - Number(counted.window_start_ms) < SIGN_IN_WINDOW_MS;
  if (inWindow && counted.failures >= SIGN_IN_MAX_FAILURES) {
    const retryAfter = Math.ceil((Number(counted.window_start_ms) + SIGN_IN_WINDOW_MS - now) / 1000);
    throw problem('rateLimited', 'Too many failed sign-ins. Wait a few minutes and try again.', {
      headers: { 'retry-after': String(retryAfter) },
    });
  }
  return inWindow;
}

/** Counts one wrong password for email+IP (a new window when none is open); sweeps old rows. */
export async function countFailure(
  db: ConsoleDb,
  input: { email: string; ip: string },
  inWindow: boolean,
  now: number,
): Promise<void> {
  await db
    .insertInto('console_sign_in_failures')
    .values({ key: limitKey(input.email, input.ip), failures: 1, window_start_ms: now })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet(
          inWindow
            ? { failures: (eb) => eb('console_sign_in_failures.failures', '+', 1) }
            : { failures: 1, window_start_ms: now },
        ),
    )
    .execute();
  await db
    .deleteFrom('console_sign_in_failures')
    .where('window_start_ms', '<=', now - SIGN_IN_WINDOW_MS)
    .execute();
}

/** Checks the password and opens a new session; 401 when wrong, 429 when rate limited. */
export async function signIn(
  db: ConsoleDb,
  input: { email: string; password: string; ip: string },
  lifetime: SessionLifetime,
  now = Date.now(),
): Promise<SignedIn> {
  const email = input.email.trim().toLowerCase();
  const who = { email, ip: input.ip };
  const inWindow = await refuseWhenLimited(db, who, now);
  const account = await db
    .selectFrom('console_accounts')
    .selectAll()
    .where('email', '=', email)
    .executeTakeFirst();
  // An unknown email still costs one scrypt (verifyPassword's decoy), so timing does not tell.
  const ok = await verifyPassword(input.password, account?.password_hash ?? null);
  if (!ok || account === undefined) {
    await countFailure(db, who, inWindow, now);
    await audit(db, { accountId: account?.id ?? null, name: email }, 'session.sign_in_failed');
    throw problem('unauthenticated', 'The email or password is not right.');
  }
  await db.deleteFrom('console_sign_in_failures').where('key', '=', limitKey(email, input.ip)).execute();
  // Said only to whoever knows the password: nothing tells others that the account exists.
  if (account.disabled_at !== null)
    throw problem('forbidden', "This account is disabled. Ask the service's operator to enable it.");
  const token = await openSession(db, account.id, lifetime, now);
  await audit(db, { accountId: account.id, name: account.email }, 'session.signed_in');
  return { token, accountId: account.id };
}
