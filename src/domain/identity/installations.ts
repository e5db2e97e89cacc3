// Installations: the link between an app and a workspace that connected to it.
import type { InstallationRow, UserRow } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import { appIdFields, type AppIdFields } from './app-id.js';
import { userSummary, type Db, type UserSummary } from './users.js';
import { getWorkspace, workspaceKeyMatches } from './workspaces.js';

/** The installation of the public record. */
export interface Installation extends AppIdFields {
  installationId: number;
  workspaceId: number;
  createdBy: UserSummary;
  dateCreated: string;
  name: string;
}

/** Connects an app to a workspace; connecting twice returns the existing installation. */
export async function connectInstallation(
  db: Db,
  appId: string,
  workspaceId: number,
): Promise<InstallationRow> {
  const existing = await db
    .selectFrom('installations')
    .selectAll()
    .where('app_id', '=', appId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (existing !== undefined) return existing;
  const workspace = await getWorkspace(db, workspaceId);
  const inserted = await db
    .insertInto('installations')
    .values({
      app_id: appId,
      workspace_id: workspaceId,
      name: workspace.display_name,
      created_by_user_id: workspace.owner_user_id,
      created_at: nowTimestamp(),
    })
    .onConflict((oc) => oc.columns(['app_id', 'workspace_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
  // A concurrent connect may have won the race; its row is the answer then.
  return (
    inserted ??
    (await db
      .selectFrom('installations')
      .selectAll()
      .where('app_id', '=', appId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow())
  );
}

/** The app connects itself with the Workspace ID and Key a workspace handed it. */
export async function connectWithWorkspaceKey(
  db: Db,
  appId: string,
  workspaceId: number,
  workspaceKey: string,
): Promise<InstallationRow> {
  const workspace = await db
    .selectFrom('workspaces')
    .selectAll()
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  // Unknown workspace and wrong key answer alike, so IDs cannot be probed.
  if (workspace === undefined || !workspaceKeyMatches(workspace, workspaceKey)) {
    throw problem('forbidden', 'The Workspace ID and Workspace Key do not match.', {
      code: 'workspace_key_mismatch',
    });
  }
  return connectInstallation(db, appId, workspaceId);
}

/** Removes an installation; its access tokens stop working at once. */
export async function removeInstallation(db: Db, installationId: number): Promise<void> {
  await db.deleteFrom('access_tokens').where('installation_id', '=', installationId).execute();
  const result = await db.deleteFrom('installations').where('id', '=', installationId).executeTakeFirst();
  if (result.numDeletedRows === 0n)
    throw problem('notFound', `Installation ${installationId} does not exist.`);
}

/** Lists installations with their creators, optionally of one app, oldest first. */
export async function listInstallations(db: Db, filter: { appId?: string } = {}): Promise<Installation[]> {
  let query = db
    .selectFrom('installations as i')
    .innerJoin('users as u', 'u.id', 'i.created_by_user_id')
    .select(['i.id', 'i.app_id', 'i.workspace_id', 'i.name', 'i.created_at', 'u.display_name', 'u.email'])
    .select('u.id as user_id')
    .orderBy('i.id');
  if (filter.appId !== undefined) query = query.where('i.app_id', '=', filter.appId);
  const rows = await query.execute();
  return rows.map((r) => installationOf(r, { id: r.user_id, display_name: r.display_name, email: r.email }));
}

/** Maps an installation row and its creator to the public shape. */
export function installationOf(
  row: Pick<InstallationRow, 'id' | 'app_id' | 'workspace_id' | 'name' | 'created_at'>,
  creator: Pick<UserRow, 'id' | 'display_name' | 'email'>,
): Installation {
  return {
    installationId: row.id,
    ...appIdFields(row.app_id),
    workspaceId: row.workspace_id,
    createdBy: userSummary(creator),
    dateCreated: row.created_at,
    name: row.name,
  };
}

/** Finds one installation in the public shape, or answers 404. */
export async function getInstallation(db: Db, installationId: number): Promise<Installation> {
  const row = await db
    .selectFrom('installations as i')
    .innerJoin('users as u', 'u.id', 'i.created_by_user_id')
    .select(['i.id', 'i.app_id', 'i.workspace_id', 'i.name', 'i.created_at', 'u.display_name', 'u.email'])
    .select('u.id as user_id')
    .where('i.id', '=', installationId)
    .executeTakeFirst();
  if (row === undefined) throw problem('notFound', `Installation ${installationId} does not exist.`);
  return installationOf(row, { id: row.user_id, display_name: row.display_name, email: row.email });
}
