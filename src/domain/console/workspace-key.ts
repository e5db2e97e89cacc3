// Rotating a workspace's key from the console: the CLI's `workspaces rotate-key` (the same domain
// function) plus an audit row. Run it in a transaction so the row and the new key land together.
import { getWorkspace, rotateWorkspaceKey } from '../identity/workspaces.js';
import { audit, type Actor } from './audit.js';
import { asServiceDb, type ConsoleDb } from './db.js';

/** The version of the workspace's current key, which the rotation form carries. */
export async function currentKeyVersion(db: ConsoleDb, workspaceId: number): Promise<number> {
  return (await getWorkspace(asServiceDb(db), workspaceId)).key_version;
}

/**
 * Replaces the Workspace Key if it is still at `fromVersion` (the version the console's form was
 * shown with; null for any, as the CLI asks) and returns the new one (the only time it is known
 * in clear); null, and nothing changed, when the key has been rotated since. The rotation deletes
 * the workspace's access tokens and bumps the key version, which every token is checked against,
 * so tokens minted with the old key stop at once.
 */
export async function rotateKeyAudited(
  db: ConsoleDb,
  actor: Actor,
  workspaceId: number,
  fromVersion: number | null,
): Promise<string | null> {
  const rotated = await rotateWorkspaceKey(asServiceDb(db), workspaceId, fromVersion);
  if (rotated === null) return null;
  const { workspace, workspaceKey } = rotated;
  await audit(db, actor, 'workspace_key.rotated', {
    workspaceId,
    detail: `key version ${workspace.key_version}`,
  });
  return workspaceKey;
}
