// The operator's workspaces: list all, create one (its Workspace Key shown once) and invite its
// owner. The same domain functions as `dx workspaces create` and `dx workspaces invite-owner`.
import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import { audit } from '../../../domain/console/audit.js';
import { consoleDb, type ConsoleDb } from '../../../domain/console/db.js';
import { invitationLink, inviteMember } from '../../../domain/console/people.js';
import { pendingOwnerInvitations } from '../../../domain/console/invitations.js';
import {
  createWorkspace,
  getWorkspace,
  listWorkspacesByName,
  WORKSPACE_TYPES,
} from '../../../domain/identity/workspaces.js';
import { pageContext, sendPage } from './context.js';
import { field } from './form.js';
import { namePageQuery } from './name-lists.js';
import { actorOf, oneOf, param, requiredName, requireOperator } from './operator-common.js';
import { invitationCreatedPage, OPERATOR } from './pages.js';
import {
  inviteOwnerPage,
  OPERATOR_LIST_PAGE,
  OPERATOR_WORKSPACES,
  workspaceCreatedPage,
  workspacesPage,
  type WorkspaceListing,
} from './pages-operator.js';

const WORKSPACE_ID = /^[1-9]\d{0,14}$/;

/** The emails of each workspace's console owners. */
async function ownersByWorkspace(db: ConsoleDb, workspaceId?: number): Promise<Map<number, string[]>> {
  let q = db
    .selectFrom('console_memberships as m')
    .innerJoin('console_accounts as a', 'a.id', 'm.account_id')
    .select(['m.workspace_id', 'a.email'])
    .where('m.role', '=', 'owner')
    .orderBy('a.email');
  if (workspaceId !== undefined) q = q.where('m.workspace_id', '=', workspaceId);
  const owners = new Map<number, string[]>();
  for (const r of await q.execute())
    owners.set(r.workspace_id, [...(owners.get(r.workspace_id) ?? []), r.email]);
  return owners;
}

/** /console/operator/workspaces… */
export function operatorWorkspaceRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/operator/workspaces', async (request, reply) => {
    requireOperator(request);
    const { search, query } = namePageQuery(request.query, OPERATOR_LIST_PAGE);
    const [page, owners, pending] = await Promise.all([
      listWorkspacesByName(deps.db, query),
      ownersByWorkspace(db),
      pendingOwnerInvitations(db),
    ]);
    const workspaces: WorkspaceListing[] = page.rows.map((w) => ({
      id: w.id,
      name: w.display_name,
      type: w.type,
      createdAt: w.created_at,
      owners: owners.get(w.id) ?? [],
      pendingOwners: pending.get(w.id) ?? [],
    }));
    const list = {
      href: '/console/operator/workspaces',
      search,
      later: query.after !== null,
      next: page.next,
      shown: workspaces.length,
    };
    return sendPage(reply, 200, workspacesPage(pageContext(deps, request), workspaces, list));
  });

  scope.post('/operator/workspaces', async (request, reply) => {
    const session = requireOperator(request);
    const name = requiredName(request.body, 'name', 'a workspace name');
    const type = oneOf(request.body, 'type', WORKSPACE_TYPES, 'a type');
    const { workspace, workspaceKey } = await deps.db.transaction().execute(async (trx) => {
      // As `dx workspaces create` does without --owner-name: the API's owner user is named after it.
      const made = await createWorkspace(trx, { displayName: name, ownerName: name, ownerEmail: '', type });
      await audit(consoleDb(trx), actorOf(session), 'workspace.created', {
        workspaceId: made.workspace.id,
        detail: `${name} (${type})`,
      });
      return made;
    });
    return sendPage(
      reply,
      201,
      workspaceCreatedPage(pageContext(deps, request), {
        id: workspace.id,
        name: workspace.display_name,
        type: workspace.type,
        workspaceKey,
      }),
    );
  });

  const workspaceOf = async (params: unknown) => {
    const id = Number(param(params, 'workspaceId', WORKSPACE_ID));
    const ws = await getWorkspace(deps.db, id);
    return {
      id: ws.id,
      name: ws.display_name,
      owners: (await ownersByWorkspace(db, ws.id)).get(ws.id) ?? [],
    };
  };

  scope.get('/operator/workspaces/:workspaceId/invite-owner', async (request, reply) => {
    requireOperator(request);
    const ws = await workspaceOf(request.params);
    return sendPage(reply, 200, inviteOwnerPage(pageContext(deps, request), ws, { error: null, email: '' }));
  });

  scope.post('/operator/workspaces/:workspaceId/owner-invitations', async (request, reply) => {
    const session = requireOperator(request);
    const ws = await workspaceOf(request.params);
    const email = field(request.body, 'email');
    try {
      // The function behind `dx workspaces invite-owner`; it writes the audit row itself.
      const invitation = await db
        .transaction()
        .execute((trx) => inviteMember(trx, actorOf(session), { workspaceId: ws.id, email, role: 'owner' }));
      return await sendPage(
        reply,
        201,
        invitationCreatedPage(pageContext(deps, request), {
          trail: [OPERATOR, OPERATOR_WORKSPACES],
          email: invitation.email,
          link: invitationLink(deps.config.publicUrl, invitation.token),
          expiresAt: invitation.expiresAt,
        }),
      );
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status !== 400) throw err;
      return sendPage(
        reply,
        400,
        inviteOwnerPage(pageContext(deps, request), ws, { error: err.detail, email }),
      );
    }
  });
}
