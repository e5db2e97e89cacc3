// Changing a member's role and removing a member. A workspace always keeps at least one owner:
// demoting or removing the last one is refused (409). Callers run these in a transaction.
import { problem } from '../../errors.js';
import { audit, type Actor } from './audit.js';
import type { ConsoleDb } from './db.js';
import { asConsoleRole, type ConsoleRole } from './roles.js';

/**
 * The member's current role, after locking the workspace's row: two owners demoting each other
 * at once must not both see "another owner remains" (PostgreSQL runs them side by side; the
 * no-op update makes the second wait for the first; SQLite already writes one at a time).
 */
async function lockedRole(db: ConsoleDb, workspaceId: number, accountId: number) {
  await db
    .updateTable('workspaces')
    .set((eb) => ({ display_name: eb.ref('display_name') }))
    .where('id', '=', workspaceId)
    .execute();
  const row = await db
    .selectFrom('console_memberships as m')
    .innerJoin('console_accounts as a', 'a.id', 'm.account_id')
    .select(['m.role', 'a.email'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.account_id', '=', accountId)
    .executeTakeFirst();
  const role = asConsoleRole(row?.role);
  if (row === undefined || role === null)
    throw problem('notFound', 'That person is not a member of this workspace.');
  return { role, email: row.email };
}

/** 409 when the member is the workspace's only owner. */
async function refuseLastOwner(db: ConsoleDb, workspaceId: number, email: string, what: string) {
  const owners = await db
    .selectFrom('console_memberships')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  if (Number(owners.n) <= 1)
    throw problem(
      'conflict',
      `${email} is the only owner of this workspace, so you cannot ${what}. Make another member an owner first.`,
    );
}

/** Gives a member another role; the last owner keeps theirs. Returns the member's email. */
export async function changeMemberRole(
  db: ConsoleDb,
  actor: Actor,
  input: { workspaceId: number; accountId: number; role: ConsoleRole },
): Promise<string> {
  const current = await lockedRole(db, input.workspaceId, input.accountId);
  if (current.role === input.role) return current.email;
  if (current.role === 'owner')
    await refuseLastOwner(db, input.workspaceId, current.email, 'change their role');
  await db
    .updateTable('console_memberships')
    .set({ role: input.role })
    .where('workspace_id', '=', input.workspaceId)
    .where('account_id', '=', input.accountId)
    .execute();
  await audit(db, actor, 'member.role_changed', {
    workspaceId: input.workspaceId,
    detail: `${current.email}: ${current.role} → ${input.role}`,
  });
  return current.email;
}

/**
 * Removes a member; the last owner stays. Their unused invitations to the workspace go too, so a
 * link they still hold cannot bring them back. Returns the member's email.
 */
export async function removeMember(
  db: ConsoleDb,
  actor: Actor,
  input: { workspaceId: number; accountId: number },
): Promise<string> {
  const current = await lockedRole(db, input.workspaceId, input.accountId);
  if (current.role === 'owner') await refuseLastOwner(db, input.workspaceId, current.email, 'remove them');
  await db
    .deleteFrom('console_memberships')
    .where('workspace_id', '=', input.workspaceId)
    .where('account_id', '=', input.accountId)
    .execute();
  await db
    .deleteFrom('console_invitations')
    .where('workspace_id', '=', input.workspaceId)
    .where('account_id', '=', input.accountId)
    .where('used_at', 'is', null)
    .execute();
  await audit(db, actor, 'member.removed', {
    workspaceId: input.workspaceId,
    detail: `${current.email} (${current.role})`,
  });
  return current.email;
}
