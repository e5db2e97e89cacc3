// /console/workspaces/:workspaceId/key: what rotating the Workspace Key does, said before it
// happens, and the rotation itself (owners and the operator), which shows the new key once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import {
  requireChange,
  requirePower,
  workspaceAccess,
  type WorkspaceAccess,
} from '../../../domain/console/access.js';
import { connectedApps } from '../../../domain/console/connected-apps.js';
import { currentKeyVersion, rotateKeyAudited } from '../../../domain/console/workspace-key.js';
import { field } from './form.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { workspaceKeyPage, workspaceKeyRotatedPage } from './pages-workspace.js';
import { workspaceIdOf } from './workspaces.js';

/** Said when a rotation form changed nothing. */
const STALE_FORM =
  'Nothing was rotated: the key has been rotated since this form was shown (a reloaded page sends it again). ' +
  'The key shown after that rotation is the current one; rotate again only if it is lost.';
const INCOMPLETE_FORM =
  'Nothing was rotated: the form did not say which key to rotate. Use the button below.';
const NAME_NOT_TYPED =
  "Nothing was rotated: type the workspace's name exactly as shown to confirm that every connected app loses access.";

export function workspaceKeyRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const keyPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    access: WorkspaceAccess,
    status: number,
    error?: string,
  ) =>
    sendPage(
      reply,
      status,
      workspaceKeyPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        mayRotate: access.powers.rotatesKey,
        apps: await connectedApps(db, access.workspaceId),
        keyVersion: await currentKeyVersion(db, access.workspaceId),
        ...(error === undefined ? {} : { error }),
      }),
    );

  scope.get('/workspaces/:workspaceId/key', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    return keyPage(request, reply, access, 200);
  });

  scope.post('/workspaces/:workspaceId/key', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    requirePower(access, 'rotatesKey', 'rotate the Workspace Key');
    const fromVersion = Number(field(request.body, 'keyVersion'));
    if (!Number.isSafeInteger(fromVersion) || fromVersion < 1)
      return keyPage(request, reply, access, 400, INCOMPLETE_FORM);
    // As deleting a dataset: a change that cuts off every connected app is confirmed by typing.
    if (field(request.body, 'confirmName').trim() !== access.workspaceName.trim())
      return keyPage(request, reply, access, 400, NAME_NOT_TYPED);
    const actor = { accountId: account.id, name: account.email };
    const workspaceKey = await db
      .transaction()
      .execute((trx) => rotateKeyAudited(trx, actor, access.workspaceId, fromVersion));
    if (workspaceKey === null) return keyPage(request, reply, access, 409, STALE_FORM);
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
