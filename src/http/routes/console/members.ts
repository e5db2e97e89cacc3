// /console/workspaces/:workspaceId/members: everyone sees the members and their roles; owners
// (and the operator) change a member's role or remove them. The last owner stays (409).
import type { FastifyInstance } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import {
  requireChange,
  requirePower,
  workspaceAccess,
  workspaceMembers,
  type WorkspaceAccess,
} from '../../../domain/console/access.js';
import { changeMemberRole, removeMember } from '../../../domain/console/members.js';
import { openInvitations } from '../../../domain/console/invitations.js';
import { asConsoleRole } from '../../../domain/console/roles.js';
import type { ConsoleSession } from '../../../domain/console/sessions.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { field } from './form.js';
import { choiceQuery, idParam } from './params.js';
import { memberPage, membersPage } from './pages-workspace.js';
import { workspaceIdOf } from './workspaces.js';

const NOTICES = {
  role: 'The role is changed.',
  removed: 'The member is removed from the workspace.',
  revoked: 'The invitation is withdrawn: its link no longer works.',
} as const;

const accountIdOf = (params: unknown) =>
  idParam(params, 'accountId', 'That person is not a member of this workspace.');

/** The session's access, refused unless it may manage members. */
async function managerAccess(
  db: ConsoleDb,
  session: ConsoleSession,
  params: unknown,
): Promise<WorkspaceAccess> {
  const access = await workspaceAccess(db, session.account, workspaceIdOf(params));
  requireChange(access);
  requirePower(access, 'managesMembers', "change members' roles or remove members");
  return access;
}

export function memberRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/workspaces/:workspaceId/members', async (request, reply) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    const done = choiceQuery(request.query, 'done', NOTICES);
    return sendPage(
      reply,
      200,
      membersPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        members: await workspaceMembers(db, access.workspaceId),
        mayManage: access.powers.managesMembers,
        notice: done !== null ? NOTICES[done] : null,
        // Those who may invite see the invitations not accepted yet; viewers do not.
        invitations: access.powers.canChange ? await openInvitations(db, access.workspaceId) : null,
        mayInvite: access.powers.mayInvite,
      }),
    );
  });

  scope.get('/workspaces/:workspaceId/members/:accountId', async (request, reply) => {
    const session = requireSession(request);
    const access = await managerAccess(db, session, request.params);
    const accountId = accountIdOf(request.params);
    const member = (await workspaceMembers(db, access.workspaceId)).find((m) => m.accountId === accountId);
    if (member === undefined) throw problem('notFound', 'That person is not a member of this workspace.');
    return sendPage(
      reply,
      200,
      memberPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        name: access.workspaceName,
        member,
        isYou: member.accountId === session.account.id,
      }),
    );
  });

  scope.post('/workspaces/:workspaceId/members/:accountId/role', async (request, reply) => {
    const session = requireSession(request);
    const access = await managerAccess(db, session, request.params);
    const accountId = accountIdOf(request.params);
    const role = asConsoleRole(field(request.body, 'role'));
    if (role === null) throw problem('invalid', 'Choose one of the roles: owner, admin or viewer.');
    const actor = { accountId: session.account.id, name: session.account.email };
    await db
      .transaction()
      .execute((trx) => changeMemberRole(trx, actor, { workspaceId: access.workspaceId, accountId, role }));
    return reply.redirect(`/console/workspaces/${access.workspaceId}/members?done=role`, 303);
  });

  scope.post('/workspaces/:workspaceId/members/:accountId/remove', async (request, reply) => {
    const session = requireSession(request);
    const access = await managerAccess(db, session, request.params);
    const accountId = accountIdOf(request.params);
    const actor = { accountId: session.account.id, name: session.account.email };
    await db
      .transaction()
      .execute((trx) => removeMember(trx, actor, { workspaceId: access.workspaceId, accountId }));
    // Someone who removed themselves can no longer open the workspace.
    if (accountId === session.account.id) return reply.redirect('/console/home', 303);
    return reply.redirect(`/console/workspaces/${access.workspaceId}/members?done=removed`, 303);
  });
}
