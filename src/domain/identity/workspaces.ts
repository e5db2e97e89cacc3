// Workspaces (campaigns, organizations) and their secret Workspace Keys, stored only as hashes.
import type { WorkspaceRow } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { hashSecret, randomSecret, secretMatchesHash } from '../../lib/secrets.js';
import { nowTimestamp } from '../../lib/time.js';
import { createUser, type Db } from './users.js';
import { checkedName } from './names.js';
import { readNamePage, type NamePageQuery, type NamePosition } from '../lists/by-name.js';

export interface WorkspaceSummary {
  workspaceId: number;
  displayName: string;
}

/** What kind of body a workspace is (shown as `workspace.type` by GET /auth/me). */
export const WORKSPACE_TYPES = ['Organization', 'Campaign'] as const;
export type WorkspaceType = (typeof WORKSPACE_TYPES)[number];

/** Narrows a stored workspace type. */
export function asWorkspaceType(value: string): WorkspaceType {
  if ((WORKSPACE_TYPES as readonly string[]).includes(value)) return value as WorkspaceType;
  throw new Error(`unknown workspace type ${value}`);
}

export interface NewWorkspace {
  displayName: string;
  /** Organization unless told otherwise. */
  type?: WorkspaceType;
  ownerName?: string;
  ownerEmail?: string;
}

/** A created workspace with its key: the only moment the key is known in clear. */
export interface CreatedWorkspace {
  workspace: WorkspaceRow;
  workspaceKey: string;
}

const KEY_PREFIX = 'wsk_';

/** Creates a workspace and its owner user; returns the Workspace Key once. */
export async function createWorkspace(db: Db, input: NewWorkspace): Promise<CreatedWorkspace> {
  const displayName = checkedName(input.displayName, 'a workspace name');
  const owner = await createUser(db, input.ownerName ?? `${displayName} owner`, input.ownerEmail ?? '');
  const workspaceKey = randomSecret(KEY_PREFIX);
  const workspace = await db
    .insertInto('workspaces')
    .values({
      display_name: displayName,
      type: input.type ?? 'Organization',
      owner_user_id: owner.id,
      key_hash: hashSecret(workspaceKey),
      key_version: 1,
      created_at: nowTimestamp(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { workspace, workspaceKey };
}

/**
 * Replaces the Workspace Key; every access token minted with the old key stops working. Only while
 * the key is still at `fromVersion` (null: whatever its version), checked in the same UPDATE, so a
 * form sent twice (a reloaded page) or two people rotating at once rotate it once: null when the
 * key has moved on since.
 */
export async function rotateWorkspaceKey(
  db: Db,
  workspaceId: number,
  fromVersion: number | null,
): Promise<CreatedWorkspace | null> {
  const workspaceKey = randomSecret(KEY_PREFIX);
  let update = db
    .updateTable('workspaces')
    .set((eb) => ({ key_hash: hashSecret(workspaceKey), key_version: eb('key_version', '+', 1) }))
    .where('id', '=', workspaceId);
  if (fromVersion !== null) update = update.where('key_version', '=', fromVersion);
  const workspace = await update.returningAll().executeTakeFirst();
  if (workspace === undefined) {
    // No such workspace: 404; else its key has moved on from `fromVersion`.
    await getWorkspace(db, workspaceId);
    return null;
  }
  await db
    .deleteFrom('access_tokens')
    .where('installation_id', 'in', (q) =>
      q.selectFrom('installations').select('id').where('workspace_id', '=', workspaceId),
    )
    .execute();
  return { workspace, workspaceKey };
}

/** Finds a workspace or answers 404. */
export async function getWorkspace(db: Db, workspaceId: number): Promise<WorkspaceRow> {
  const row = await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
  if (row === undefined) throw problem('notFound', `Workspace ${workspaceId} does not exist.`);
  return row;
}

/** Renames a workspace; returns its name before. Installations keep the name they were made with
 * (DXAPI's installation name); the API shows the workspace's new name at once (the identity epoch). */
export async function renameWorkspace(db: Db, workspaceId: number, name: string): Promise<string> {
  const displayName = checkedName(name, 'a workspace name');
  const before = await getWorkspace(db, workspaceId);
  await db
    .updateTable('workspaces')
    .set({ display_name: displayName })
    .where('id', '=', workspaceId)
    .execute();
  return before.display_name;
}

/** Lists every workspace, oldest first (operator CLI). */
export async function listWorkspaces(db: Db): Promise<WorkspaceRow[]> {
  return db.selectFrom('workspaces').selectAll().orderBy('id').execute();
}

/** A page of the workspaces in name order (then ID), found by name (lists/by-name.ts). */
export async function listWorkspacesByName(
  db: Db,
  query: NamePageQuery,
): Promise<{ rows: WorkspaceRow[]; next: NamePosition | null }> {
  return readNamePage(
    db.selectFrom('workspaces').selectAll(),
    { name: 'display_name', id: 'id' },
    query,
    (w) => ({ name: w.display_name, id: w.id }),
  );
}

/** True when `key` is the workspace's current key (constant-time comparison of hashes). */
export function workspaceKeyMatches(workspace: Pick<WorkspaceRow, 'key_hash'>, key: string): boolean {
  return secretMatchesHash(key, workspace.key_hash);
}

/** The workspace summary of the public record. */
export function workspaceSummary(row: Pick<WorkspaceRow, 'id' | 'display_name'>): WorkspaceSummary {
  return { workspaceId: row.id, displayName: row.display_name };
}
