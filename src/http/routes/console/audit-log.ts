// The audit log, a page at a time (newest first, AUDIT_PAGE_SIZE rows, an "Older" link):
// a workspace's for its owners and the operator, the whole service's for the operator.
import type { FastifyInstance } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { auditRows } from '../../../domain/console/audit.js';
import { workspaceAccess } from '../../../domain/console/access.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { optionalIdQuery } from './params.js';
import { auditLogPage } from './pages-workspace.js';
import { workspaceIdOf } from './workspaces.js';

export const AUDIT_PAGE_SIZE = 50;

/** One page of rows older than `before`, and the links to the next older page and the newest. */
async function auditPage(db: ConsoleDb, path: string, before: number | undefined, workspaceId?: number) {
  // One row more than a page tells whether an older page exists.
  const rows = await auditRows(db, {
    ...(workspaceId !== undefined ? { workspaceId } : {}),
    ...(before !== undefined ? { before } : {}),
    limit: AUDIT_PAGE_SIZE + 1,
  });
  const shown = rows.slice(0, AUDIT_PAGE_SIZE);
  const last = shown.at(-1);
  return {
    rows: shown,
    olderHref: rows.length > AUDIT_PAGE_SIZE && last !== undefined ? `${path}?before=${last.id}` : null,
    newestHref: before !== undefined ? path : null,
  };
}

export function auditLogRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/workspaces/:workspaceId/audit', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    if (!access.readsAudit)
      throw problem('forbidden', "Only the workspace's owners and the operator read its audit log.");
    const path = `/console/workspaces/${access.workspaceId}/audit`;
    const page = await auditPage(db, path, optionalIdQuery(request.query, 'before'), access.workspaceId);
    return sendPage(
      reply,
      200,
      auditLogPage(pageContext(deps, request), {
        workspace: { workspaceId: access.workspaceId, name: access.workspaceName },
        ...page,
      }),
    );
  });

  scope.get('/audit', async (request, reply) => {
    const { account } = requireSession(request);
    if (account.is_operator !== 1)
      throw problem('forbidden', "Only the service's operator reads the whole audit log.");
    const page = await auditPage(db, '/console/audit', optionalIdQuery(request.query, 'before'));
    return sendPage(reply, 200, auditLogPage(pageContext(deps, request), { workspace: null, ...page }));
  });
}
