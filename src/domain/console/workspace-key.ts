// Rotating a workspace's key from the console: the CLI's `workspaces rotate-key` (the same domain
// function) plus an audit row. Run it in a transaction so the row and the new key land together.
import { rotateWorkspaceKey } from '../identity/workspaces.js';
import { audit, type Actor } from './audit.js';
import { asServiceDb, type ConsoleDb } from './db.js';

/**
 * Replaces the Workspace Key and returns the new one (the only time it is known in clear).
 * `rotateWorkspaceKey` deletes the workspace's access tokens and bumps the key version, which
 * every token is checked against, so tokens minted with the old key stop at once.
 */
export async function rotateKeyAudited(db: ConsoleDb, actor: Actor, workspaceId: number): Promise<string> {
  const { workspace, workspaceKey } = await rotateWorkspaceKey(asServiceDb(db), workspaceId);
  await audit(db, actor, 'workspace_key.rotated', {
    workspaceId,
    detail: `key version ${workspace.key_version}`,
  });
  return workspaceKey;
}
