// A workspace's connected apps (installations) as the console manages them: connect by app ID and
// disconnect, through the same domain functions as the CLI, each with an audit row. Callers run
// the changes in a transaction so the row and the change land together.
import { problem } from '../../errors.js';
import { getApp } from '../identity/apps.js';
import { connectInstallation, removeInstallation } from '../identity/installations.js';
import { audit, type Actor } from './audit.js';
import { asServiceDb, type ConsoleDb } from './db.js';

/** An installation as the console shows it. */
export interface ConnectedApp {
  installationId: number;
  appId: string;
  appName: string;
  connectedAt: string;
}

const MAX_APP_ID = 100;

function connectedAppsQuery(db: ConsoleDb, workspaceId: number) {
  return db
    .selectFrom('installations as i')
    .innerJoin('apps as a', 'a.id', 'i.app_id')
    .select(['i.id', 'i.app_id', 'a.name', 'i.created_at'])
    .where('i.workspace_id', '=', workspaceId);
}

function connectedAppOf(r: { id: number; app_id: string; name: string; created_at: string }): ConnectedApp {
  return { installationId: r.id, appId: r.app_id, appName: r.name, connectedAt: r.created_at };
}

/** The apps connected to a workspace, oldest connection first. */
export async function connectedApps(db: ConsoleDb, workspaceId: number): Promise<ConnectedApp[]> {
  return (await connectedAppsQuery(db, workspaceId).orderBy('i.id').execute()).map(connectedAppOf);
}

/** One installation of the workspace, or 404 (also for another workspace's installation). */
export async function connectedApp(
  db: ConsoleDb,
  workspaceId: number,
  installationId: number,
): Promise<ConnectedApp> {
  const row = await connectedAppsQuery(db, workspaceId).where('i.id', '=', installationId).executeTakeFirst();
  if (row === undefined) throw problem('notFound', 'That app is not connected to this workspace.');
  return connectedAppOf(row);
}

/**
 * Connects an app by its ID (400 for a blank ID, 404 for an unknown app), audited when it made a
 * new installation. Connecting twice changes nothing (`created: false`): the console answers that
 * with 409, the CLI (idempotent) with the existing installation.
 */
export async function connectAppAudited(
  db: ConsoleDb,
  actor: Actor,
  workspaceId: number,
  rawAppId: string,
): Promise<{ app: ConnectedApp; created: boolean }> {
  const appId = rawAppId.trim();
  if (appId === '' || appId.length > MAX_APP_ID)
    throw problem('invalid', "Enter the app's ID, as its developer gave it to you.");
  const app = await getApp(asServiceDb(db), appId);
  const existing = await connectedAppsQuery(db, workspaceId)
    .where('i.app_id', '=', app.id)
    .executeTakeFirst();
  if (existing !== undefined) return { app: connectedAppOf(existing), created: false };
  const installation = await connectInstallation(asServiceDb(db), app.id, workspaceId);
  await audit(db, actor, 'app.connected', { workspaceId, detail: `${app.name} (${app.id})` });
  return { app: connectedAppOf({ ...installation, name: app.name }), created: true };
}

/** Disconnects one of the workspace's apps; its access tokens stop at once (removeInstallation). */
export async function disconnectAppAudited(
  db: ConsoleDb,
  actor: Actor,
  workspaceId: number,
  installationId: number,
): Promise<ConnectedApp> {
  const app = await connectedApp(db, workspaceId, installationId);
  await removeInstallation(asServiceDb(db), installationId);
  await audit(db, actor, 'app.disconnected', { workspaceId, detail: `${app.appName} (${app.appId})` });
  return app;
}

/** The CLI's disconnect, by installation ID alone: audited in the installation's workspace. */
export async function removeInstallationAudited(
  db: ConsoleDb,
  actor: Actor,
  installationId: number,
): Promise<ConnectedApp> {
  const row = await db
    .selectFrom('installations')
    .select('workspace_id')
    .where('id', '=', installationId)
    .executeTakeFirst();
  if (row === undefined) throw problem('notFound', `Installation ${installationId} does not exist.`);
  return disconnectAppAudited(db, actor, row.workspace_id, installationId);
}
