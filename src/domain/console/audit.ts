// The console's audit log: who did what, when, in which workspace. Every console action writes
// one row through `audit`, in the same transaction as the change where there is one.
import { nowTimestamp } from '../../lib/time.js';
import { csvField } from '../records/render.js';
import type { ConsoleAuditRow } from '../../storage/db/console-tables.js';
import type { ConsoleDb } from './db.js';
import { appIdFields } from '../identity/app-id.js';
import type { Db } from '../identity/users.js';

/** What can be written to the log: a closed set, so reports can rely on the names. */
export const AUDIT_ACTIONS = [
  // People and sign-in (people.ts, sign-in.ts, sessions.ts).
  'operator.invited',
  'owner.invited',
  'member.invited',
  'invitation.accepted',
  'password.set',
  'session.signed_in',
  'session.sign_in_failed',
  'session.signed_out',
  // Invitations on a workspace's members page (invitations.ts).
  'invitation.revoked',
  'invitation.resent',
  // A person's own account page, and the way back in (account.ts, password-resets.ts).
  'account.renamed',
  'password.changed',
  // The operator's accounts page (routes/console/operator-accounts.ts).
  'account.disabled',
  'account.enabled',
  'operator.granted',
  'operator.revoked',
  'password.reset_link_issued',
  'password.reset_requested',
  'password.reset',
  // The operator's pages (routes/console/operator-*.ts).
  'app.created',
  'app.renamed',
  'app_key.added',
  'app_key.revoked',
  'app_webhook.set',
  'app_webhook.removed',
  'workspace.created',
  'proxy_id.created',
  'proxy_id.revoked',
  // A workspace's datasets (routes/console/datasets.ts).
  'dataset.apps_changed',
  'dataset.deleted',
  // A file loaded into a dataset from its page (routes/console/upload.ts).
  'dataset.file_loaded',
  // An app, through the API, removed the tag of the app that created a dataset (datasets/tags.ts).
  'dataset.creator_untagged',
  // An app, through the API, changed a dataset's schema (datasets/change-schema.ts).
  'dataset.schema_changed',
  // A workspace's own settings (routes/console/workspace-key.ts, installations.ts, members.ts).
  'workspace_key.rotated',
  'workspace.renamed',
  'app.connected',
  'app.disconnected',
  'member.role_changed',
  'member.removed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Each action in plain words, for the people who read the log (a new action needs its words). */
export const AUDIT_ACTION_LABELS: Record<AuditAction, string> = {
  'operator.invited': 'Invited an operator',
  'owner.invited': 'Invited an owner',
  'member.invited': 'Invited a member',
  'invitation.accepted': 'Accepted an invitation',
  'password.set': 'Set a password',
  'session.signed_in': 'Signed in',
  'session.sign_in_failed': 'Failed to sign in',
  'session.signed_out': 'Signed out',
  'invitation.revoked': 'Withdrew an invitation',
  'invitation.resent': 'Sent an invitation again',
  'account.renamed': 'Changed their display name',
  'account.disabled': 'Disabled an account',
  'account.enabled': 'Enabled an account',
  'operator.granted': 'Gave an account operator rights',
  'operator.revoked': "Took back an account's operator rights",
  'password.changed': 'Changed their password',
  'password.reset_link_issued': 'Issued a password reset link',
  'password.reset_requested': 'Asked for a password reset link by mail',
  'password.reset': 'Set a new password with a reset link',
  'app.created': 'Created an app',
  'app.renamed': 'Renamed an app',
  'app_key.added': "Added an app's key",
  'app_key.revoked': "Revoked an app's key",
  'app_webhook.set': "Set an app's webhook",
  'app_webhook.removed': "Removed an app's webhook",
  'workspace.created': 'Created a workspace',
  'proxy_id.created': 'Created a proxy ID',
  'proxy_id.revoked': 'Revoked a proxy ID',
  'dataset.apps_changed': 'Changed which apps see a dataset',
  'dataset.deleted': 'Deleted a dataset',
  'dataset.file_loaded': 'Loaded a file into a dataset',
  'dataset.creator_untagged': "Removed the creating app's access to a dataset",
  'dataset.schema_changed': "Changed a dataset's schema",
  'workspace_key.rotated': 'Rotated the Workspace Key',
  'workspace.renamed': 'Renamed the workspace',
  'app.connected': 'Connected an app',
  'app.disconnected': 'Disconnected an app',
  'member.role_changed': "Changed a member's role",
  'member.removed': 'Removed a member',
};

/** The plain words of a stored action; a name this version does not know is shown as it is. */
export function auditActionLabel(action: string): string {
  return (AUDIT_ACTION_LABELS as Record<string, string | undefined>)[action] ?? action;
}

/** Who acted: an account, the operator's command line, or an app through the API. */
export interface Actor {
  accountId: number | null;
  /** An email, `cli` for the command line, or `app NAME (APP ID)` for an app. */
  name: string;
}

export const CLI_ACTOR: Actor = { accountId: null, name: 'cli' };

/** An app as the log names it, `app NAME (APP ID)`, its name read in `db` (a change's transaction). */
export async function appActor(db: Db, appId: string): Promise<Actor> {
  const app = await db.selectFrom('apps').select('name').where('id', '=', appId).executeTakeFirstOrThrow();
  return { accountId: null, name: `app ${app.name} (${appIdFields(appId).platformAppId})` };
}

/** Appends one row to the audit log. */
export async function audit(
  db: ConsoleDb,
  actor: Actor,
  action: AuditAction,
  details: { workspaceId?: number | null; detail?: string | null } = {},
): Promise<void> {
  await db
    .insertInto('console_audit')
    .values({
      at: nowTimestamp(),
      account_id: actor.accountId,
      actor: actor.name,
      action,
      workspace_id: details.workspaceId ?? null,
      detail: details.detail ?? null,
    })
    .execute();
}

/** The newest rows (older than row `before` when given), of one workspace or of all, of one action
 * or of every one, newest first. */
export async function auditRows(
  db: ConsoleDb,
  options: { workspaceId?: number; action?: AuditAction; limit?: number; before?: number } = {},
): Promise<ConsoleAuditRow[]> {
  let q = db.selectFrom('console_audit').selectAll();
  if (options.workspaceId !== undefined) q = q.where('workspace_id', '=', options.workspaceId);
  if (options.action !== undefined) q = q.where('action', '=', options.action);
  if (options.before !== undefined) q = q.where('id', '<', options.before);
  return q
    .orderBy('id', 'desc')
    .limit(options.limit ?? 100)
    .execute();
}

/** The header of the audit log's CSV file. */
export const AUDIT_CSV_HEADER = 'at_utc,actor,action,workspace_id,detail\r\n';

/** Rows per read of the CSV file: memory stays flat whatever the log's length. */
const AUDIT_CSV_ROWS = 500;

/**
 * A CSV field of text people typed (names, emails): this file is opened in spreadsheets, so text
 * that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return first)
 * gets a leading `'`, as OWASP advises for CSV files meant for people. Record exports never do this:
 * they are data, byte for byte.
 */
function cell(text: string): string {
  return csvField(/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
}

/** The rows auditRows selects, all of them newest first, as CSV (RFC 4180, CRLF). */
export async function* auditCsv(
  db: ConsoleDb,
  options: { workspaceId?: number; action?: AuditAction } = {},
): AsyncGenerator<string> {
  yield AUDIT_CSV_HEADER;
  let before: number | undefined;
  for (;;) {
    const rows = await auditRows(db, {
      ...options,
      limit: AUDIT_CSV_ROWS,
      ...(before !== undefined ? { before } : {}),
    });
    if (rows.length === 0) return;
    let out = '';
    for (const r of rows)
      out += `${r.at},${cell(r.actor)},${r.action},${r.workspace_id ?? ''},${cell(r.detail ?? '')}\r\n`;
    yield out;
    if (rows.length < AUDIT_CSV_ROWS) return;
    before = rows.at(-1)!.id;
  }
}
