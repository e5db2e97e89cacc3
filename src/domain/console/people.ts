// Console accounts (the operator and workspace members), their memberships and invitations. An
// invitation is a one-time link: its token is shown once and stored only as a sha256 hash (a
// 32-byte random token needs no slow hash), valid for 24 hours.
import { problem } from '../../errors.js';
import { hashSecret, randomSecret } from '../../lib/secrets.js';
import { nowTimestamp } from '../../lib/time.js';
import type { ConsoleAccountRow } from '../../storage/db/console-tables.js';
import { audit, type Actor, type AuditAction } from './audit.js';
import type { ConsoleDb } from './db.js';
import { hashPassword, passwordProblem } from './passwords.js';
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

/** Stores a new invitation of an account and returns its token, shown once; no audit row. */
export async function insertInvitation(
  db: ConsoleDb,
  input: { accountId: number; workspaceId: number | null; role: ConsoleRole | null; invitedBy: string },
  now: number,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomSecret(TOKEN_PREFIX);
  const expiresAt = now + INVITATION_TTL_MS;
  await db
    .insertInto('console_invitations')
    .values({
      token_hash: hashSecret(token),
      account_id: input.accountId,
      workspace_id: input.workspaceId,
      role: input.role,
      expires_at: expiresAt,
      used_at: null,
      created_at: nowTimestamp(),
      invited_by: input.invitedBy,
    })
    .execute();
  return { token, expiresAt: new Date(expiresAt) };
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
  const { token, expiresAt } = await insertInvitation(
    db,
    { accountId: account.id, workspaceId: input.workspaceId, role: input.role, invitedBy: actor.name },
    now,
  );
  await audit(db, actor, action, {
    workspaceId: input.workspaceId,
    detail: `${email}${input.role !== null ? ` as ${input.role}` : ''}`,
  });
  return { token, email, expiresAt };
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
  /** The invited account. */
  accountId: number;
  email: string;
  displayName: string;
  workspaceId: number | null;
  workspaceName: string | null;
  role: ConsoleRole | null;
  /** The person already has a password: they accept signed in, not with a new password. */
  hasAccount: boolean;
}

/**
 * What a link is: still good; already accepted (the page then offers sign-in); or not working,
 * one answer for unknown, expired and withdrawn links (the page says to ask for a new one).
 */
export type InvitationState =
  { state: 'pending'; invitation: PendingInvitation } | { state: 'used' } | { state: 'dead' };

export const INVITATION_USED = 'This invitation was already accepted. Sign in to open the workspace.';
export const INVITATION_DEAD = 'This invitation link has expired or was withdrawn. Ask for a new one.';

async function invitationRow(db: ConsoleDb, token: string) {
  return db
    .selectFrom('console_invitations as i')
    .innerJoin('console_accounts as a', 'a.id', 'i.account_id')
    .leftJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .select(['i.token_hash', 'i.account_id', 'i.workspace_id', 'i.role', 'i.expires_at', 'i.used_at'])
    .select(['a.email', 'a.display_name', 'a.password_hash', 'w.display_name as workspace_name'])
    .where('i.token_hash', '=', hashSecret(token))
    .executeTakeFirst();
}

/** The state of the invitation behind a link. */
export async function invitationState(
  db: ConsoleDb,
  token: string,
  now = Date.now(),
): Promise<InvitationState> {
  const row = await invitationRow(db, token);
  if (row === undefined) return { state: 'dead' };
  if (row.used_at !== null) return { state: 'used' };
  if (Number(row.expires_at) <= now) return { state: 'dead' };
  return {
    state: 'pending',
    invitation: {
      accountId: row.account_id,
      email: row.email,
      displayName: row.display_name,
      workspaceId: row.workspace_id,
      workspaceName: row.workspace_name,
      role: asConsoleRole(row.role),
      hasAccount: row.password_hash !== null,
    },
  };
}

async function usableInvitation(db: ConsoleDb, token: string, now: number) {
  const row = await invitationRow(db, token);
  if (row === undefined) throw problem('gone', INVITATION_DEAD);
  // A used link says so even once expired: the person who accepted it is told to sign in.
  if (row.used_at !== null) throw problem('gone', INVITATION_USED);
  if (Number(row.expires_at) <= now) throw problem('gone', INVITATION_DEAD);
  return row;
}

/** How a person accepts: a new person chooses a name and password; someone with an account is signed in. */
export type Acceptance = { displayName: string; password: string } | { signedInAs: number };

/**
 * Accepts an invitation: a new person sets a display name and password; someone who already has
 * a password must be signed in as that account (an invitation never lets its holder replace an
 * existing password, which would hand them the person's other workspaces, and passwords are typed
 * only on the sign-in page, with its rate limit). Then it grants the membership (or operator
 * rights) and spends the link.
 */
export async function acceptInvitation(
  db: ConsoleDb,
  token: string,
  input: Acceptance,
  now = Date.now(),
): Promise<ConsoleAccountRow> {
  const row = await usableInvitation(db, token, now);
  let changes: { display_name: string; password_hash: string } | null = null;
  if (row.password_hash !== null) {
    if (!('signedInAs' in input) || input.signedInAs !== row.account_id)
      throw problem('forbidden', `Sign in as ${row.email} to accept this invitation.`);
  } else {
    if (!('password' in input))
      throw problem('invalid', 'Choose a display name and a password to accept this invitation.');
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
  if (Number(spent.numUpdatedRows) !== 1) throw problem('gone', INVITATION_USED);
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
