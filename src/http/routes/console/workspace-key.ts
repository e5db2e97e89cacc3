// /console/workspaces/:workspaceId/key: what rotating the Workspace Key does, said before it
// happens, and the rotation itself (owners and the operator), which shows the new key once.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { requireChange, requirePower, workspaceAccess } from '../../../domain/console/access.js';
import { connectedApps } from '../../../domain/console/connected-apps.js';
import { rotateKeyAudited } from '../../../domain/console/workspace-key.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { workspaceKeyPage, workspaceKeyRotatedPage } from './pages-workspace.js';
import { workspaceIdOf } from './workspaces.js';

export function workspaceKeyRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/workspaces/:workspaceId/key', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    const apps = await connectedApps(db, access.workspaceId);
    return sendPage(
      reply,
      200,
      workspaceKeyPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        mayRotate: access.powers.rotatesKey,
        apps,
      }),
    );
  });

  scope.post('/workspaces/:workspaceId/key', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    requirePower(access, 'rotatesKey', 'rotate the Workspace Key');
    const actor = { accountId: account.id, name: account.email };
    const workspaceKey = await db
      .transaction()
      .execute((trx) => rotateKeyAudited(trx, actor, access.workspaceId));
    const apps = await connectedApps(db, access.workspaceId);
    // Not a redirect: the key exists in clear only in this response (no-store, like every page).
    return sendPage(
      reply,
      200,
      workspaceKeyRotatedPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        workspaceKey,
        apps,
      }),
    );
  });
}
