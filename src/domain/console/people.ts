// Console accounts (the operator and workspace members), their memberships and invitations. An
// invitation is a one-time link: its token is shown once and stored only as a sha256 hash (a
// 32-byte random token needs no slow hash), valid for 24 hours.
import { problem } from '../../errors.js';
import { hashSecret, randomSecret } from '../../lib/secrets.js';
import { nowTimestamp } from '../../lib/time.js';
import type { ConsoleAccountRow } from '../../storage/db/console-tables.js';
import { audit, type Actor, type AuditAction } from './audit.js';
import type { ConsoleDb } from './db.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { asConsoleRole, type ConsoleRole } from './roles.js';

/** How long an invitation link works. */
export const INVITATION_TTL_MS = 24 * 60 * 60 * 1000;
const TOKEN_PREFIX = 'dxi_';
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAX_EMAIL = 254;
const MAX_NAME = 200;

/** The canonical form of an email address (trimmed, lower case), or a 400 when it is not one. */
export function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (e.length > MAX_EMAIL || !EMAIL.test(e)) throw problem('invalid', 'Enter a valid email address.');
  return e;
}

/** The link that opens an invitation; the token goes in the query, which logs leave out. */
export function invitationLink(publicUrl: string, token: string): string {
  return `${publicUrl}/console/invitation?token=${encodeURIComponent(token)}`;
}

/** A membership as pages show it. */
export interface Membership {
  workspaceId: number;
  workspaceName: string;
  role: ConsoleRole;
}

/** The account with this email, made (without a password, not an operator) when there is none. */
async function accountFor(db: ConsoleDb, email: string): Promise<ConsoleAccountRow> {
  const existing = await db
    .selectFrom('console_accounts')
    .selectAll()
    .where('email', '=', email)
    .executeTakeFirst();
  if (existing !== undefined) return existing;
  return db
    .insertInto('console_accounts')
    .values({
      email,
      display_name: email.split('@')[0] ?? email,
      password_hash: null,
      is_operator: 0,
      created_at: nowTimestamp(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A new invitation's link token and expiry, shown once. */
export interface Invitation {
  token: string;
  email: string;
  expiresAt: Date;
}

async function invite(
  db: ConsoleDb,
  actor: Actor,
  action: AuditAction,
  // No workspace and no role: an operator's invitation (granted when accepted).
  input: { email: string; workspaceId: number | null; role: ConsoleRole | null },
  now: number,
): Promise<Invitation> {
  const email = normalizeEmail(input.email);
  const account = await accountFor(db, email);
  const token = randomSecret(TOKEN_PREFIX);
  const expiresAt = now + INVITATION_TTL_MS;
  await db
    .insertInto('console_invitations')
    .values({
      token_hash: hashSecret(token),
      account_id: account.id,
      workspace_id: input.workspaceId,
      role: input.role,
      expires_at: expiresAt,
      used_at: null,
      created_at: nowTimestamp(),
    })
    .execute();
  await audit(db, actor, action, {
    workspaceId: input.workspaceId,
    detail: `${email}${input.role !== null ? ` as ${input.role}` : ''}`,
  });
  return { token, email, expiresAt: new Date(expiresAt) };
}

/** Makes (or finds) an operator account and invites it to set its password. */
export async function inviteOperator(
  db: ConsoleDb,
  actor: Actor,
  email: string,
  now = Date.now(),
): Promise<Invitation> {
  return invite(db, actor, 'operator.invited', { email, workspaceId: null, role: null }, now);
}

/** Invites a person into a workspace with a role (the operator invites the first owner). */
export async function inviteMember(
  db: ConsoleDb,
  actor: Actor,
  input: { workspaceId: number; email: string; role: ConsoleRole },
  now = Date.now(),
): Promise<Invitation> {
  const workspace = await db
    .selectFrom('workspaces')
    .select('id')
    .where('id', '=', input.workspaceId)
    .executeTakeFirst();
  if (workspace === undefined) throw problem('notFound', `Workspace ${input.workspaceId} does not exist.`);
  // An owner's invitation is named as such whoever makes it (the CLI, the operator's page, an owner).
  const action: AuditAction = input.role === 'owner' ? 'owner.invited' : 'member.invited';
  return invite(db, actor, action, input, now);
}

/** Sets an operator's password directly (the CLI reading it from standard input). */
export async function createOperatorWithPassword(
  db: ConsoleDb,
  actor: Actor,
  email: string,
  password: string,
): Promise<ConsoleAccountRow> {
  const why = passwordProblem(password);
  if (why !== null) throw problem('invalid', why);
  const account = await accountFor(db, normalizeEmail(email));
  await db
    .updateTable('console_accounts')
    .set({ password_hash: await hashPassword(password), is_operator: 1 })
    .where('id', '=', account.id)
    .execute();
  await audit(db, actor, 'password.set', { detail: account.email });
  return account;
}

/** What an invitation link opens, when it is still good. */
export interface PendingInvitation {
  email: string;
  displayName: string;
  workspaceName: string | null;
  role: ConsoleRole | null;
  /** The person already has a password: accepting asks for it instead of setting a new one. */
  hasAccount: boolean;
}

async function usableInvitation(db: ConsoleDb, token: string, now: number) {
  const row = await db
    .selectFrom('console_invitations as i')
    .innerJoin('console_accounts as a', 'a.id', 'i.account_id')
    .leftJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .select(['i.token_hash', 'i.account_id', 'i.workspace_id', 'i.role', 'i.expires_at', 'i.used_at'])
    .select(['a.email', 'a.display_name', 'a.password_hash', 'w.display_name as workspace_name'])
    .where('i.token_hash', '=', hashSecret(token))
    .executeTakeFirst();
  // One answer for unknown, used and expired links: the page says only that the link does not work.
  if (row === undefined || row.used_at !== null || Number(row.expires_at) <= now)
    throw problem('gone', 'This invitation link has expired or was already used. Ask for a new one.');
  return row;
}

/** The invitation behind a link, or 410 when it is unknown, used or expired. */
export async function pendingInvitation(
  db: ConsoleDb,
  token: string,
  now = Date.now(),
): Promise<PendingInvitation> {
  const row = await usableInvitation(db, token, now);
  return {
    email: row.email,
    displayName: row.display_name,
    workspaceName: row.workspace_name,
    role: asConsoleRole(row.role),
    hasAccount: row.password_hash !== null,
  };
}

/**
 * Accepts an invitation: a new person sets a display name and password; someone who already has
 * a password proves it instead (an invitation never lets its holder replace an existing
 * password, which would hand them the person's other workspaces). Then it grants the membership
 * (or operator rights) and spends the link.
 */
export async function acceptInvitation(
  db: ConsoleDb,
  token: string,
  input: { displayName: string; password: string },
  now = Date.now(),
): Promise<ConsoleAccountRow> {
  const row = await usableInvitation(db, token, now);
  let changes: { display_name: string; password_hash: string } | null = null;
  if (row.password_hash !== null) {
    if (!(await verifyPassword(input.password, row.password_hash)))
      throw problem('invalid', 'Enter the password you already sign in with.');
  } else {
    const displayName = input.displayName.trim();
    if (displayName === '' || displayName.length > MAX_NAME)
      throw problem('invalid', `Enter a display name of 1 to ${MAX_NAME} characters.`);
    const why = passwordProblem(input.password);
    if (why !== null) throw problem('invalid', why);
    changes = { display_name: displayName, password_hash: await hashPassword(input.password) };
  }
  // Spend the link and check that this request was the one that did (two tabs submitting).
  const spent = await db
    .updateTable('console_invitations')
    .set({ used_at: nowTimestamp() })
    .where('token_hash', '=', row.token_hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1)
    throw problem('gone', 'This invitation link has expired or was already used. Ask for a new one.');
  const role = asConsoleRole(row.role);
  const operator = row.workspace_id === null;
  const set = { ...(changes ?? {}), ...(operator ? { is_operator: 1 } : {}) };
  const account =
    Object.keys(set).length > 0
      ? await db
          .updateTable('console_accounts')
          .set(set)
          .where('id', '=', row.account_id)
          .returningAll()
          .executeTakeFirstOrThrow()
      : await db
          .selectFrom('console_accounts')
          .selectAll()
          .where('id', '=', row.account_id)
          .executeTakeFirstOrThrow();
  if (row.workspace_id !== null && role !== null) {
    // An existing membership keeps its role: changing roles is an action of its own.
    await db
      .insertInto('console_memberships')
      .values({ account_id: account.id, workspace_id: row.workspace_id, role, created_at: nowTimestamp() })
      .onConflict((oc) => oc.columns(['account_id', 'workspace_id']).doNothing())
      .execute();
  }
  await audit(db, { accountId: account.id, name: account.email }, 'invitation.accepted', {
    workspaceId: row.workspace_id,
    detail: role ?? 'operator',
  });
  return account;
}

/** The workspaces an account belongs to, with its role in each. */
export async function membershipsOf(db: ConsoleDb, accountId: number): Promise<Membership[]> {
  const rows = await db
    .selectFrom('console_memberships as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['m.workspace_id', 'm.role', 'w.display_name'])
    .where('m.account_id', '=', accountId)
    .orderBy('m.workspace_id')
    .execute();
  return rows.flatMap((r) => {
    const role = asConsoleRole(r.role);
    return role === null ? [] : [{ workspaceId: r.workspace_id, workspaceName: r.display_name, role }];
  });
}
