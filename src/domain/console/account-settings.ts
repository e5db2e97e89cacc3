// A person's own account (the /console/account page): their display name and their password.
// Changing the password asks for the current one, counted against the sign-in rate limit (a
// session left open must not let someone guess it); it ends the account's other sessions and
// voids its reset links.
import { problem } from '../../errors.js';
import type { ConsoleAccountRow } from '../../storage/db/console-tables.js';
import { audit } from './audit.js';
import type { ConsoleDb } from './db.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { voidResetLinks } from './password-resets.js';
import { endSessionsOf } from './sessions.js';
import { countFailure, refuseWhenLimited } from './sign-in.js';

const MAX_NAME = 200;

/** Sets the account's display name (trimmed, 1 to 200 characters); 400 otherwise. */
export async function renameAccount(
  db: ConsoleDb,
  account: Pick<ConsoleAccountRow, 'id' | 'email' | 'display_name'>,
  displayName: string,
): Promise<void> {
  const name = displayName.trim();
  if (name === '' || name.length > MAX_NAME)
    throw problem('invalid', `Enter a display name of 1 to ${MAX_NAME} characters.`);
  if (name === account.display_name) return;
  await db.updateTable('console_accounts').set({ display_name: name }).where('id', '=', account.id).execute();
  await audit(db, { accountId: account.id, name: account.email }, 'account.renamed', {
    detail: `${account.display_name} → ${name}`,
  });
}

/**
 * Checks the current password (400 when wrong, 429 when too many were wrong) and the new one, and
 * returns the new one's hash. Slow (two scrypt runs): call it before the transaction that stores it.
 */
export async function checkPasswordChange(
  db: ConsoleDb,
  account: Pick<ConsoleAccountRow, 'email' | 'password_hash'>,
  input: { current: string; next: string; confirm: string; ip: string },
  now = Date.now(),
): Promise<string> {
  const who = { email: account.email, ip: input.ip };
  const inWindow = await refuseWhenLimited(db, who, now);
  if (!(await verifyPassword(input.current, account.password_hash))) {
    await countFailure(db, who, inWindow, now);
    throw problem('invalid', 'The current password is not right.');
  }
  const why = passwordProblem(input.next);
  if (why !== null) throw problem('invalid', why);
  if (input.next !== input.confirm) throw problem('invalid', 'The two new passwords are not the same.');
  return hashPassword(input.next);
}

/** Stores a new password hash; ends the account's other sessions (not `keepSession`) and voids its reset links. */
export async function storeNewPassword(
  db: ConsoleDb,
  account: Pick<ConsoleAccountRow, 'id' | 'email'>,
  passwordHash: string,
  keepSession: string,
): Promise<void> {
  await db
    .updateTable('console_accounts')
    .set({ password_hash: passwordHash })
    .where('id', '=', account.id)
    .execute();
  await endSessionsOf(db, account.id, keepSession);
  await voidResetLinks(db, account.id);
  await audit(db, { accountId: account.id, name: account.email }, 'password.changed');
}
