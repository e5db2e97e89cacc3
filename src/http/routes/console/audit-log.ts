// The audit log, a page at a time (newest first, AUDIT_PAGE_SIZE rows, an "Older" link), of every
// action or of one (`?action=`), and the same rows whole as a CSV file: a workspace's for its
// owners and the operator, the whole service's for the operator.
import type { FastifyInstance } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { auditCsv, auditRows, AUDIT_ACTION_LABELS, type AuditAction } from '../../../domain/console/audit.js';
import { workspaceAccess } from '../../../domain/console/access.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { choiceQuery, optionalIdQuery } from './params.js';
import { auditLogPage } from './pages-workspace.js';
import { workspaceIdOf } from './workspaces.js';

export const AUDIT_PAGE_SIZE = 50;

/** The action the log is filtered by (`?action=`): undefined for all, a 400 page for an unknown one. */
function actionQuery(query: unknown): AuditAction | undefined {
  const raw = (query as { action?: unknown } | undefined)?.action;
  if (raw === undefined || raw === '') return undefined;
  const action = choiceQuery(query, 'action', AUDIT_ACTION_LABELS);
  if (action === null) throw problem('invalid', 'The page address is not valid (action).');
  return action;
}

/** One page of rows older than `before`, and the links to the next older page and the newest. */
async function auditPage(
  db: ConsoleDb,
  path: string,
  filter: { workspaceId?: number; action?: AuditAction },
  before: number | undefined,
) {
  // One row more than a page tells whether an older page exists.
  const rows = await auditRows(db, {
    ...filter,
    ...(before !== undefined ? { before } : {}),
    limit: AUDIT_PAGE_SIZE + 1,
  });
  const shown = rows.slice(0, AUDIT_PAGE_SIZE);
  const last = shown.at(-1);
  const query = (more: Record<string, string>) => {
    const q = new URLSearchParams({
      ...(filter.action !== undefined ? { action: filter.action } : {}),
      ...more,
    });
    return q.size > 0 ? `${path}?${q.toString()}` : path;
  };
  return {
    rows: shown,
    action: filter.action ?? null,
    olderHref:
      rows.length > AUDIT_PAGE_SIZE && last !== undefined ? query({ before: String(last.id) }) : null,
    newestHref: before !== undefined ? query({}) : null,
    csvHref: `${path}.csv${filter.action !== undefined ? `?action=${filter.action}` : ''}`,
  };
}

/** Sends the rows as a CSV file named `name`. */
function sendCsv(reply: FastifyReply, name: string, rows: AsyncGenerator<string>) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}.csv"`)
    .send(Readable.from(rows));
}

export function auditLogRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const workspaceLog = async (request: Parameters<typeof requireSession>[0]) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    if (!access.readsAudit)
      throw problem('forbidden', "Only the workspace's owners and the operator read its audit log.");
    return access;
  };
  const requireOperatorLog = (request: Parameters<typeof requireSession>[0]) => {
    const { account } = requireSession(request);
    if (account.is_operator !== 1)
      throw problem('forbidden', "Only the service's operator reads the whole audit log.");
  };

  scope.get('/workspaces/:workspaceId/audit', async (request, reply) => {
    const access = await workspaceLog(request);
    const path = `/console/workspaces/${access.workspaceId}/audit`;
    const filter = { workspaceId: access.workspaceId, ...withAction(request.query) };
    const page = await auditPage(db, path, filter, optionalIdQuery(request.query, 'before'));
    return sendPage(
      reply,
      200,
      auditLogPage(pageContext(deps, request), {
        workspace: { workspaceId: access.workspaceId, name: access.workspaceName },
        ...page,
      }),
    );
  });

  scope.get('/workspaces/:workspaceId/audit.csv', async (request, reply) => {
    const access = await workspaceLog(request);
    const filter = { workspaceId: access.workspaceId, ...withAction(request.query) };
    return sendCsv(reply, `audit-workspace-${access.workspaceId}`, auditCsv(db, filter));
  });

  scope.get('/audit', async (request, reply) => {
    requireOperatorLog(request);
    const filter = withAction(request.query);
    const page = await auditPage(db, '/console/audit', filter, optionalIdQuery(request.query, 'before'));
    return sendPage(reply, 200, auditLogPage(pageContext(deps, request), { workspace: null, ...page }));
  });

  scope.get('/audit.csv', async (request, reply) => {
    requireOperatorLog(request);
    return sendCsv(reply, 'audit', auditCsv(db, withAction(request.query)));
  });
}

/** `{ action }` when the query names one. */
function withAction(query: unknown): { action?: AuditAction } {
  const action = actionQuery(query);
  return action !== undefined ? { action } : {};
}
