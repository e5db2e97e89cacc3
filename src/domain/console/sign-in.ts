// Sign-in with email and password, rate limited per email+IP: wrong passwords are counted in the
// database (rate-windows.ts), so every API instance shares the count and a restart resets none; a
// right password forgets it.
import { problem } from '../../errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { audit } from './audit.js';
import type { ConsoleDb } from './db.js';
import { verifyPassword } from './passwords.js';
import type { SessionLifetime } from '../../config.js';
import { openSession } from './sessions.js';
import { countAttempt, forgetAttempts, refuseWhenSpent, type RateRule } from './rate-windows.js';

/** Failures allowed per email+IP within the window before sign-in is refused (429). */
export const SIGN_IN_MAX_FAILURES = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
const SIGN_IN_RULE: RateRule = {
  limit: SIGN_IN_MAX_FAILURES,
  windowMs: SIGN_IN_WINDOW_MS,
  refusal: 'Too many failed sign-ins. Wait a few minutes and try again.',
};

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
export function refuseWhenLimited(
  db: ConsoleDb,
  input: { email: string; ip: string },
  now: number,
): Promise<boolean> {
  return refuseWhenSpent(db, limitKey(input.email, input.ip), SIGN_IN_RULE, now);
}

/** Counts one wrong password for email+IP (a new window when none is open); sweeps old rows. */
export function countFailure(
  db: ConsoleDb,
  input: { email: string; ip: string },
  inWindow: boolean,
  now: number,
): Promise<void> {
  return countAttempt(db, limitKey(input.email, input.ip), SIGN_IN_RULE, inWindow, now);
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
  await forgetAttempts(db, limitKey(email, input.ip));
  // Said only to whoever knows the password: nothing tells others that the account exists.
  if (account.disabled_at !== null)
    throw problem('forbidden', "This account is disabled. Ask the service's operator to enable it.");
  const token = await openSession(db, account.id, lifetime, now);
  await audit(db, { accountId: account.id, name: account.email }, 'session.signed_in');
  return { token, accountId: account.id };
}
