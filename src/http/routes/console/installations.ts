// /console/workspaces/:workspaceId/apps: the workspace's connected apps (installations), connect
// by app ID, and disconnect after a confirmation page. Owners and admins change; viewers look.
import type { FastifyInstance } from 'fastify';
import { problem, ProblemError } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { requireChange, workspaceAccess, type WorkspaceAccess } from '../../../domain/console/access.js';
import {
  connectAppAudited,
  connectedApp,
  connectedApps,
  disconnectAppAudited,
} from '../../../domain/console/connected-apps.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { field } from './form.js';
import { choiceQuery, idParam } from './params.js';
import { connectedAppsPage, disconnectAppPage } from './pages-workspace.js';
import { workspaceIdOf } from './workspaces.js';

/** What the list says after a change (PRG: the change redirects here with `done`). */
const NOTICES = {
  connected: 'The app is connected. It can now get access with the Workspace ID and Key.',
  disconnected: 'The app is disconnected. Its access tokens stopped working.',
} as const;

const installationIdOf = (params: unknown) =>
  idParam(params, 'installationId', 'That app is not connected to this workspace.');

export function connectedAppRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const listPage = async (
    request: Parameters<typeof pageContext>[1],
    access: WorkspaceAccess,
    extra: { notice: string | null; error: string | null; appId: string },
  ) =>
    connectedAppsPage(pageContext(deps, request), {
      workspaceId: access.workspaceId,
      name: access.workspaceName,
      apps: await connectedApps(db, access.workspaceId),
      mayChange: access.powers.canChange,
      ...extra,
    });

  scope.get('/workspaces/:workspaceId/apps', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    const done = choiceQuery(request.query, 'done', NOTICES);
    return sendPage(
      reply,
      200,
      await listPage(request, access, {
        notice: done !== null ? NOTICES[done] : null,
        error: null,
        appId: '',
      }),
    );
  });

  scope.post('/workspaces/:workspaceId/apps', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    const appId = field(request.body, 'appId');
    const actor = { accountId: account.id, name: account.email };
    try {
      await db.transaction().execute(async (trx) => {
        const { app, created } = await connectAppAudited(trx, actor, access.workspaceId, appId);
        if (!created) throw problem('conflict', `${app.appName} is already connected to this workspace.`);
      });
    } catch (err) {
      // A blank, unknown or already connected app ID: the form again, with what went wrong.
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return sendPage(
        reply,
        err.status,
        await listPage(request, access, { notice: null, error: err.detail, appId }),
      );
    }
    return reply.redirect(`/console/workspaces/${access.workspaceId}/apps?done=connected`, 303);
  });

  scope.get('/workspaces/:workspaceId/apps/:installationId/disconnect', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    const app = await connectedApp(db, access.workspaceId, installationIdOf(request.params));
    return sendPage(
      reply,
      200,
      disconnectAppPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        app,
      }),
    );
  });

  scope.post('/workspaces/:workspaceId/apps/:installationId/disconnect', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    const installationId = installationIdOf(request.params);
    const actor = { accountId: account.id, name: account.email };
    await db
      .transaction()
      .execute((trx) => disconnectAppAudited(trx, actor, access.workspaceId, installationId));
    return reply.redirect(`/console/workspaces/${access.workspaceId}/apps?done=disconnected`, 303);
  });
}
