// One-time password reset links: `PUBLIC_URL/console/reset-password?token=dxr_…`, valid for an
// hour, stored as the token's sha256 hash (a 32-byte random token needs no slow hash). A newer
// link voids the older ones, and so does a password change; using one sets the password, spends
// it and ends every session of the account. The operator (console page, `dx console reset-link`)
// issues them; with SMTP configured, a person asks for one by mail, at most a few times an hour
// per address, and the answer never tells whether the address has an account.
import { problem } from '../../errors.js';
import { hashSecret, randomSecret, secretMatchesHash } from '../../lib/secrets.js';
import { nowTimestamp } from '../../lib/time.js';
import { audit, type Actor } from './audit.js';
import type { ConsoleDb } from './db.js';
import { normalizeEmail } from './people.js';
import { endSessionsOf } from './sessions.js';
import { countAttempt, refuseWhenSpent, type RateRule } from './rate-windows.js';

/** How long a reset link works. */
export const RESET_TTL_MS = 60 * 60 * 1000;
/** Links asked for by mail per address within RESET_REQUEST_WINDOW_MS, before 429. */
export const RESET_REQUESTS_PER_WINDOW = 3;
export const RESET_REQUEST_WINDOW_MS = 60 * 60 * 1000;
const RESET_REQUEST_RULE: RateRule = {
  limit: RESET_REQUESTS_PER_WINDOW,
  windowMs: RESET_REQUEST_WINDOW_MS,
  refusal:
    'A reset link was asked for this address several times already. Wait an hour, or ask the operator.',
};
const TOKEN_PREFIX = 'dxr_';

export const RESET_DEAD = 'This password reset link has expired or was already used. Ask for a new one.';

/** The link that opens a reset; the token goes in the query, which logs leave out. */
export function resetLink(publicUrl: string, token: string): string {
  return `${publicUrl}/console/reset-password?token=${encodeURIComponent(token)}`;
}

/** A new reset link's token and expiry, shown (or mailed) once. */
export interface ResetLink {
  token: string;
  email: string;
  expiresAt: Date;
}

/**
 * Issues a reset link for the account with `email`, voiding its earlier ones; null when no
 * account has the address. `by` is who issued it: the operator or the CLI, or null when the
 * person asked for it by mail. Issuing changes nothing else: the account's rights stay as they are.
 */
export async function issueResetLink(
  db: ConsoleDb,
  by: Actor | null,
  email: string,
  now = Date.now(),
): Promise<ResetLink | null> {
  const address = normalizeEmail(email);
  // Found through a no-op update, which locks the account's row until the transaction ends: two
  // links issued at once (two requests by mail) then void each other in turn, and only the last works.
  const account = await db
    .updateTable('console_accounts')
    .set((eb) => ({ email: eb.ref('email') }))
    .where('email', '=', address)
    .returning(['id', 'email'])
    .executeTakeFirst();
  if (account === undefined) return null;
  // The account's earlier links go (a newer one voids them): the table holds one row per account
  // at most, so it needs no sweep (and this transaction touches no other account's rows).
  await db.deleteFrom('console_password_resets').where('account_id', '=', account.id).execute();
  const token = randomSecret(TOKEN_PREFIX);
  const expiresAt = now + RESET_TTL_MS;
  await db
    .insertInto('console_password_resets')
    .values({
      token_hash: hashSecret(token),
      account_id: account.id,
      expires_at: expiresAt,
      used_at: null,
      created_at: nowTimestamp(),
    })
    .execute();
  if (by !== null) await audit(db, by, 'password.reset_link_issued', { detail: account.email });
  else
    await audit(db, { accountId: account.id, name: account.email }, 'password.reset_requested', {
      detail: account.email,
    });
  return { token, email: account.email, expiresAt: new Date(expiresAt) };
}

/** The account a usable link resets, or 410 (unknown, used, expired or voided: one answer). */
async function usableReset(db: ConsoleDb, token: string, now: number) {
  if (!token.startsWith(TOKEN_PREFIX)) throw problem('gone', RESET_DEAD);
  const row = await db
    .selectFrom('console_password_resets as r')
    .innerJoin('console_accounts as a', 'a.id', 'r.account_id')
    .select(['r.token_hash', 'r.account_id', 'r.expires_at', 'r.used_at', 'a.email'])
    .where('r.token_hash', '=', hashSecret(token))
    .executeTakeFirst();
  // Found by its hash's index; checked again in constant time, so no comparison leaks timing.
  if (
    row === undefined ||
    !secretMatchesHash(token, row.token_hash) ||
    row.used_at !== null ||
    Number(row.expires_at) <= now
  )
    throw problem('gone', RESET_DEAD);
  return row;
}

/** The email whose password a link resets, or 410. */
export async function pendingReset(
  db: ConsoleDb,
  token: string,
  now = Date.now(),
): Promise<{ email: string }> {
  const row = await usableReset(db, token, now);
  return { email: row.email };
}

/**
 * Sets the account's new password (already hashed: hashing is slow and runs before the
 * transaction), spends the link, voids the account's other links and ends all its sessions.
 * Returns the email.
 */
export async function resetPassword(
  db: ConsoleDb,
  token: string,
  passwordHash: string,
  now = Date.now(),
): Promise<string> {
  const row = await usableReset(db, token, now);
  const spent = await db
    .updateTable('console_password_resets')
    .set({ used_at: nowTimestamp() })
    .where('token_hash', '=', row.token_hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1) throw problem('gone', RESET_DEAD);
  await db
    .updateTable('console_accounts')
    .set({ password_hash: passwordHash })
    .where('id', '=', row.account_id)
    .execute();
  await voidResetLinks(db, row.account_id);
  await endSessionsOf(db, row.account_id);
  await audit(db, { accountId: row.account_id, name: row.email }, 'password.reset', { detail: row.email });
  return row.email;
}

/** Voids the account's unused reset links (its password changed some other way). */
export async function voidResetLinks(db: ConsoleDb, accountId: number): Promise<void> {
  await db
    .deleteFrom('console_password_resets')
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .execute();
}

/**
 * Counts one request for a link by mail to `email`; 429 past RESET_REQUESTS_PER_WINDOW in the
 * window. Counted per address whether or not an account has it, so the limit tells nothing.
 */
export async function countResetRequest(db: ConsoleDb, email: string, now = Date.now()): Promise<void> {
  // Hashed: the table holds no addresses in clear.
  const key = hashSecret(`reset\n${normalizeEmail(email)}`);
  const open = await refuseWhenSpent(db, key, RESET_REQUEST_RULE, now);
  await countAttempt(db, key, RESET_REQUEST_RULE, open, now);
}

/** The message that carries a reset link. */
export function resetMail(link: ResetLink, url: string): { subject: string; text: string } {
  return {
    subject: 'Your Dataset Exchange console password',
    text: [
      `Someone asked to reset the password of the Dataset Exchange console account ${link.email}.`,
      '',
      'To choose a new password, open this link within the hour. It works once:',
      '',
      url,
      '',
      'Setting a new password signs you out everywhere you are signed in.',
      'If you did not ask for this, ignore this message: your password stays as it is.',
      '',
    ].join('\n'),
  };
}
