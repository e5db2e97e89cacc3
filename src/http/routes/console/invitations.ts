// A workspace's invitations not yet accepted, from its members page: withdraw one (its link stops
// working) or send it again (a new link, shown once; the old one stops working). Owners and
// admins, each for the roles they may invite; every change is in the audit log.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { requireChange, workspaceAccess } from '../../../domain/console/access.js';
import { resendInvitation, revokeInvitation } from '../../../domain/console/invitations.js';
import { requireSession } from './context.js';
import { field } from './form.js';
import { sendInvitationCreated, workspaceIdOf } from './workspaces.js';

export function invitationRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  /** The session's access and actor, refused (403) for whoever may only look. */
  const changer = async (request: Parameters<typeof requireSession>[0]) => {
    const { account } = requireSession(request);
    const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
    requireChange(access);
    return {
      access,
      actor: { accountId: account.id, name: account.email },
      target: {
        workspaceId: access.workspaceId,
        id: field(request.body, 'invitation'),
        mayInvite: access.powers.mayInvite,
      },
    };
  };

  scope.post('/workspaces/:workspaceId/invitations/revoke', async (request, reply) => {
    const { access, actor, target } = await changer(request);
    await db.transaction().execute((trx) => revokeInvitation(trx, actor, target));
    return reply.redirect(`/console/workspaces/${access.workspaceId}/members?done=revoked`, 303);
  });

  scope.post('/workspaces/:workspaceId/invitations/resend', async (request, reply) => {
    const { access, actor, target } = await changer(request);
    const invitation = await db.transaction().execute((trx) => resendInvitation(trx, actor, target));
    return sendInvitationCreated(deps, request, reply, access, invitation);
  });
}
