// The signed-in pages: home (the member's workspaces; all of them for the operator) and a
// workspace's home with its Workspace ID, the viewer's role, members and invitations.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import { asServiceDb, type ConsoleDb } from '../../../domain/console/db.js';
import { renameWorkspace } from '../../../domain/identity/workspaces.js';
import { audit, auditRows } from '../../../domain/console/audit.js';
import { requireChange, workspaceAccess, workspaceMembers } from '../../../domain/console/access.js';
import { invitationLink, inviteMember, membershipsOf } from '../../../domain/console/people.js';
import { asConsoleRole } from '../../../domain/console/roles.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { field } from './form.js';
import { homePage, invitationCreatedPage, workspacePage, workspaceTrail } from './pages.js';

/** The `:workspaceId` of a console path, or 404. */
export function workspaceIdOf(params: unknown): number {
  const raw = (params as { workspaceId?: string }).workspaceId ?? '';
  const id = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw problem('notFound', 'There is no such workspace.');
  return id;
}

/** /console/home, /console/workspaces/:workspaceId and its invitations. */
export function workspaceRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/home', async (request, reply) => {
    const { account } = requireSession(request);
    const memberships = await membershipsOf(db, account.id);
    const operatorWorkspaces =
      account.is_operator === 1
        ? (await db.selectFrom('workspaces').select(['id', 'display_name']).orderBy('id').execute()).map(
            (w) => ({
              id: w.id,
              name: w.display_name,
            }),
          )
        : null;
    return sendPage(reply, 200, homePage(pageContext(deps, request), { memberships, operatorWorkspaces }));
  });

  scope.get('/workspaces/:workspaceId', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    const [members, audit] = await Promise.all([
      workspaceMembers(db, access.workspaceId),
      access.readsAudit
        ? auditRows(db, { workspaceId: access.workspaceId, limit: 20 })
        : Promise.resolve(null),
    ]);
    return sendPage(
      reply,
      200,
      workspacePage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        roleLabel: access.label,
        mayInvite: access.powers.mayInvite,
        renames: access.powers.renamesWorkspace,
        members,
        audit,
      }),
    );
  });

  scope.post('/workspaces/:workspaceId/name', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    if (!access.powers.renamesWorkspace)
      throw problem('forbidden', 'Only an owner of the workspace renames it.');
    const name = field(request.body, 'name');
    await db.transaction().execute(async (trx) => {
      const before = await renameWorkspace(asServiceDb(trx), access.workspaceId, name);
      await audit(trx, { accountId: account.id, name: account.email }, 'workspace.renamed', {
        workspaceId: access.workspaceId,
        detail: `${before} → ${name.trim()}`,
      });
    });
    return reply.redirect(`/console/workspaces/${access.workspaceId}`, 303);
  });

  scope.post('/workspaces/:workspaceId/invitations', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    const role = asConsoleRole(field(request.body, 'role'));
    if (role === null || !access.powers.mayInvite.includes(role))
      throw problem(
        'forbidden',
        `As ${access.label.toLowerCase()} you cannot invite someone with that role.`,
      );
    const invitation = await db
      .transaction()
      .execute((trx) =>
        inviteMember(
          trx,
          { accountId: account.id, name: account.email },
          { workspaceId: access.workspaceId, email: field(request.body, 'email'), role },
        ),
      );
    return sendInvitationCreated(deps, request, reply, access, invitation);
  });
}

/** The page that shows a new invitation's link once (made, or sent again): 201. */
export function sendInvitationCreated(
  deps: ApiDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  workspace: { workspaceId: number; workspaceName: string },
  invitation: { email: string; token: string; expiresAt: Date },
): FastifyReply {
  return sendPage(
    reply,
    201,
    invitationCreatedPage(pageContext(deps, request), {
      trail: workspaceTrail({ workspaceId: workspace.workspaceId, name: workspace.workspaceName }),
      email: invitation.email,
      link: invitationLink(deps.config.publicUrl, invitation.token),
      expiresAt: invitation.expiresAt,
    }),
  );
}
