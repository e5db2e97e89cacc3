// What a signed-in account may see and do in a workspace: a member by its role, the operator as
// an owner of every workspace. Someone else gets 404, so a workspace's existence is not revealed.
import { problem } from '../../errors.js';
import type { ConsoleAccountRow } from '../../storage/db/console-tables.js';
import type { ConsoleDb } from './db.js';
import { asConsoleRole, ROLE_POWERS, type ConsoleRole, type RolePowers } from './roles.js';

export interface WorkspaceAccess {
  workspaceId: number;
  workspaceName: string;
  /** How the page names the access: the role's label, or Operator. */
  label: string;
  /** The member's role; null for the operator (who is not a member). */
  role: ConsoleRole | null;
  powers: RolePowers;
  /** Owners and the operator read the workspace's audit log. */
  readsAudit: boolean;
}

/** The account's access to a workspace, or 404. */
export async function workspaceAccess(
  db: ConsoleDb,
  account: Pick<ConsoleAccountRow, 'id' | 'is_operator'>,
  workspaceId: number,
): Promise<WorkspaceAccess> {
  const row = await db
    .selectFrom('workspaces as w')
    .leftJoin('console_memberships as m', (j) =>
      j.onRef('m.workspace_id', '=', 'w.id').on('m.account_id', '=', account.id),
    )
    .select(['w.id', 'w.display_name', 'm.role'])
    .where('w.id', '=', workspaceId)
    .executeTakeFirst();
  const role = asConsoleRole(row?.role);
  const notFound = problem('notFound', 'There is no such workspace, or you are not a member of it.');
  if (row === undefined) throw notFound;
  if (account.is_operator === 1)
    return {
      workspaceId: row.id,
      workspaceName: row.display_name,
      label: 'Operator',
      role: null,
      powers: ROLE_POWERS.owner,
      readsAudit: true,
    };
  if (role === null) throw notFound;
  return {
    workspaceId: row.id,
    workspaceName: row.display_name,
    label: ROLE_POWERS[role].label,
    role,
    powers: ROLE_POWERS[role],
    readsAudit: role === 'owner' || account.is_operator === 1,
  };
}

/** Refuses (403) a change by someone whose role may only look. */
export function requireChange(access: WorkspaceAccess): void {
  if (!access.powers.canChange)
    throw problem('forbidden', `As ${access.label.toLowerCase()} you can look but not change anything here.`);
}

/** Refuses (403) what only some roles may do: rotating the key, managing members. */
export function requirePower(
  access: WorkspaceAccess,
  power: 'rotatesKey' | 'managesMembers',
  what: string,
): void {
  if (!access.powers[power])
    throw problem('forbidden', `As ${access.label.toLowerCase()} you cannot ${what}; an owner can.`);
}

/** A member as pages show them. */
export interface WorkspaceMember {
  accountId: number;
  email: string;
  displayName: string;
  role: ConsoleRole;
}

/** The members of a workspace, owners first. */
export async function workspaceMembers(db: ConsoleDb, workspaceId: number): Promise<WorkspaceMember[]> {
  const rows = await db
    .selectFrom('console_memberships as m')
    .innerJoin('console_accounts as a', 'a.id', 'm.account_id')
    .select(['a.id', 'a.email', 'a.display_name', 'm.role'])
    .where('m.workspace_id', '=', workspaceId)
    .orderBy('a.email')
    .execute();
  const order: Record<ConsoleRole, number> = { owner: 0, admin: 1, viewer: 2 };
  return rows
    .flatMap((r) => {
      const role = asConsoleRole(r.role);
      return role === null ? [] : [{ accountId: r.id, email: r.email, displayName: r.display_name, role }];
    })
    .sort((a, b) => order[a.role] - order[b.role]);
}
