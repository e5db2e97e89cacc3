// The operator's view of the console's accounts: the list (in email order, found by email or
// name), disabling and enabling one, and granting or taking back operator rights. A disabled
// account keeps its memberships and history; it cannot sign in, and its sessions end at once.
import { sql } from 'kysely';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import { nameHolds, readNamePage, type NamePageQuery, type NamePosition } from '../lists/by-name.js';
import type { ConsoleDb } from './db.js';

/** An account as the operator's list shows it. */
export interface AccountListing {
  id: number;
  email: string;
  displayName: string;
  isOperator: boolean;
  /** Null until an invitation was accepted (no password yet). */
  hasPassword: boolean;
  disabledAt: string | null;
  createdAt: string;
  /** Workspaces the account is a member of. */
  workspaces: number;
}

/** A page of accounts in email order; `nameContains` matches the email or the display name. */
export async function listAccounts(
  db: ConsoleDb,
  page: NamePageQuery,
): Promise<{ rows: AccountListing[]; next: NamePosition | null }> {
  let query = db.selectFrom('console_accounts as a').select([
    'a.id',
    'a.email',
    'a.display_name',
    'a.is_operator',
    'a.password_hash',
    'a.disabled_at',
    'a.created_at',
    (eb) =>
      eb
        .selectFrom('console_memberships as m')
        .whereRef('m.account_id', '=', 'a.id')
        .select((m) => m.fn.countAll<number>().as('n'))
        .as('workspaces'),
  ]);
  // Found by the email (the list's order) or by the display name.
  const search = page.nameContains;
  if (search !== '')
    query = query.where(
      sql<boolean>`(${nameHolds('a.email', search)} or ${nameHolds('a.display_name', search)})`,
    );
  const read = await readNamePage(
    query,
    { name: 'a.email', id: 'a.id' },
    { ...page, nameContains: '' },
    (r) => ({ name: r.email, id: r.id }),
  );
  return {
    next: read.next,
    rows: read.rows.map((r) => ({
      id: r.id,
      email: r.email,
      displayName: r.display_name,
      isOperator: r.is_operator === 1,
      hasPassword: r.password_hash !== null,
      disabledAt: r.disabled_at,
      createdAt: r.created_at,
      workspaces: Number(r.workspaces ?? 0),
    })),
  };
}

/** What the operator may change of an account. */
export type AccountChange = 'disable' | 'enable' | 'grantOperator' | 'revokeOperator';

/**
 * Applies `change` to the account (in the caller's transaction, with its audit row); returns the
 * account's email. `by` is the operator's own account: nobody disables themself or takes back
 * their own rights here (another operator does), so nobody locks themself out by a slip, and the
 * service always keeps an enabled operator (the one acting).
 */
export async function changeAccount(
  db: ConsoleDb,
  accountId: number,
  change: AccountChange,
  by: number,
): Promise<string> {
  const account = await db
    .selectFrom('console_accounts')
    .select(['id', 'email', 'is_operator', 'disabled_at'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (account === undefined) throw problem('notFound', 'There is no such account.');
  const removesAnOperator =
    account.is_operator === 1 &&
    account.disabled_at === null &&
    (change === 'disable' || change === 'revokeOperator');
  if (removesAnOperator && accountId === by)
    throw problem('conflict', 'You cannot do this to your own account; another operator can.');
  switch (change) {
    case 'disable':
      await db
        .updateTable('console_accounts')
        .set({ disabled_at: nowTimestamp() })
        .where('id', '=', accountId)
        .where('disabled_at', 'is', null)
        .execute();
      await db.deleteFrom('console_sessions').where('account_id', '=', accountId).execute();
      break;
    case 'enable':
      await db
        .updateTable('console_accounts')
        .set({ disabled_at: null })
        .where('id', '=', accountId)
        .execute();
      break;
    case 'grantOperator':
      await db.updateTable('console_accounts').set({ is_operator: 1 }).where('id', '=', accountId).execute();
      break;
    case 'revokeOperator':
      // Every request reads the rights afresh (findSession): they end with this commit.
      await db.updateTable('console_accounts').set({ is_operator: 0 }).where('id', '=', accountId).execute();
      break;
  }
  return account.email;
}
