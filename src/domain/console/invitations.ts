// A workspace's open invitations (not yet accepted: pending or expired), as its members page lists
// them, and what owners and admins do with one: withdraw it, or send it again (a new one-time link
// that voids the old). An invitation is named on the page by its token's sha256 hash, the key it
// is stored under: the hash cannot be turned back into the link.
import { problem } from '../../errors.js';
import type { ConsoleDb } from './db.js';
import { audit, type Actor } from './audit.js';
import { insertInvitation, type Invitation } from './people.js';
import { asConsoleRole, type ConsoleRole } from './roles.js';

/** An invitation not yet accepted, as the members page lists it. */
export interface OpenInvitation {
  /** The stored hash of its token. */
  id: string;
  email: string;
  role: ConsoleRole;
  /** As the audit log names them (an email, or `cli`); null for invitations made before it was kept. */
  invitedBy: string | null;
  expiresAt: Date;
  expired: boolean;
}

const HASH = /^[0-9a-f]{64}$/;
const NOT_FOUND = 'That invitation was accepted or withdrawn already.';

/** The workspace's invitations not yet accepted, pending ones first, each group newest first. */
export async function openInvitations(
  db: ConsoleDb,
  workspaceId: number,
  now = Date.now(),
): Promise<OpenInvitation[]> {
  const rows = await db
    .selectFrom('console_invitations as i')
    .innerJoin('console_accounts as a', 'a.id', 'i.account_id')
    .select(['i.token_hash', 'i.role', 'i.expires_at', 'i.invited_by', 'a.email'])
    .where('i.workspace_id', '=', workspaceId)
    .where('i.used_at', 'is', null)
    .orderBy('i.expires_at', 'desc')
    .execute();
  const list = rows.flatMap((r) => {
    const role = asConsoleRole(r.role);
    const expiresAt = Number(r.expires_at);
    return role === null
      ? []
      : [
          {
            id: r.token_hash,
            email: r.email,
            role,
            invitedBy: r.invited_by,
            expiresAt: new Date(expiresAt),
            expired: expiresAt <= now,
          },
        ];
  });
  return [...list.filter((i) => !i.expired), ...list.filter((i) => i.expired)];
}

/** One open invitation of the workspace, refused (403) unless `mayInvite` includes its role. */
async function openInvitation(
  db: ConsoleDb,
  input: { workspaceId: number; id: string; mayInvite: readonly ConsoleRole[] },
) {
  if (!HASH.test(input.id)) throw problem('notFound', NOT_FOUND);
  const row = await db
    .selectFrom('console_invitations as i')
    .innerJoin('console_accounts as a', 'a.id', 'i.account_id')
    .select(['i.token_hash', 'i.account_id', 'i.role', 'a.email'])
    .where('i.token_hash', '=', input.id)
    .where('i.workspace_id', '=', input.workspaceId)
    .where('i.used_at', 'is', null)
    .executeTakeFirst();
  const role = asConsoleRole(row?.role);
  if (row === undefined || role === null) throw problem('notFound', NOT_FOUND);
  // Whoever may not invite someone with this role may not withdraw or renew their invitation either.
  if (!input.mayInvite.includes(role))
    throw problem('forbidden', `Only an owner can withdraw or resend an invitation as ${role}.`);
  return { ...row, role };
}

/** Removes the invitation only if it is still unused (two people acting on it at once). */
async function deleteUnused(db: ConsoleDb, tokenHash: string): Promise<void> {
  const gone = await db
    .deleteFrom('console_invitations')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(gone.numDeletedRows) !== 1) throw problem('notFound', NOT_FOUND);
}

/** Withdraws an invitation: its link stops working at once. Returns the invited email. */
export async function revokeInvitation(
  db: ConsoleDb,
  actor: Actor,
  input: { workspaceId: number; id: string; mayInvite: readonly ConsoleRole[] },
): Promise<string> {
  const row = await openInvitation(db, input);
  await deleteUnused(db, row.token_hash);
  await audit(db, actor, 'invitation.revoked', {
    workspaceId: input.workspaceId,
    detail: `${row.email} as ${row.role}`,
  });
  return row.email;
}

/** Sends an invitation again: a new one-time link, valid 24 hours from now; the old one stops working. */
export async function resendInvitation(
  db: ConsoleDb,
  actor: Actor,
  input: { workspaceId: number; id: string; mayInvite: readonly ConsoleRole[] },
  now = Date.now(),
): Promise<Invitation> {
  const row = await openInvitation(db, input);
  await deleteUnused(db, row.token_hash);
  const { token, expiresAt } = await insertInvitation(
    db,
    { accountId: row.account_id, workspaceId: input.workspaceId, role: row.role, invitedBy: actor.name },
    now,
  );
  await audit(db, actor, 'invitation.resent', {
    workspaceId: input.workspaceId,
    detail: `${row.email} as ${row.role}`,
  });
  return { token, email: row.email, expiresAt };
}

/** The emails of owners invited to each workspace whose links still work (the operator's list). */
export async function pendingOwnerInvitations(
  db: ConsoleDb,
  now = Date.now(),
): Promise<Map<number, string[]>> {
  const rows = await db
    .selectFrom('console_invitations as i')
    .innerJoin('console_accounts as a', 'a.id', 'i.account_id')
    .select(['i.workspace_id', 'a.email'])
    .where('i.role', '=', 'owner')
    .where('i.used_at', 'is', null)
    .where('i.expires_at', '>', now)
    .orderBy('a.email')
    .execute();
  const pending = new Map<number, string[]>();
  for (const r of rows) {
    if (r.workspace_id === null) continue;
    const list = pending.get(r.workspace_id) ?? [];
    if (!list.includes(r.email)) list.push(r.email);
    pending.set(r.workspace_id, list);
  }
  return pending;
}
