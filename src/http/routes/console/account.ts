// Sign-in, sign-out and accepting an invitation.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError, problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { audit } from '../../../domain/console/audit.js';
import {
  acceptInvitation,
  INVITATION_DEAD,
  INVITATION_USED,
  invitationState,
  type PendingInvitation,
} from '../../../domain/console/people.js';
import { endSession } from '../../../domain/console/sessions.js';
import { signIn } from '../../../domain/console/sign-in.js';
import {
  consolePathOrNull,
  consoleState,
  cookieOptions,
  pageContext,
  PRE_SESSION_COOKIE,
  requireSession,
  sendPage,
  SESSION_COOKIE,
} from './context.js';
import { field } from './form.js';
import { acceptPage, invitationUsedPage, signInPage, type Opener, type Recovery } from './pages.js';

const SIGN_IN_NOTICES = {
  accepted: 'Your password is set. Sign in with it now.',
  reset: 'Your new password is set, and every session of the account was ended. Sign in with it now.',
} as const;

/** Where an invitation link leads back to (after signing in as its account). */
const invitationPath = (token: string) => `/console/invitation?token=${encodeURIComponent(token)}`;

/** /console/sign-in, /console/sign-out, /console/invitation. */
export function accountRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const recovery: Recovery = deps.config.mail !== null ? 'mail' : 'operator';

  scope.get('/sign-in', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const next = consolePathOrNull(field(query, 'next'));
    if (consoleState(request).session !== null) return reply.redirect(next ?? '/console/home', 303);
    const notice = Object.entries(SIGN_IN_NOTICES).find(([k]) => query[k] === '1')?.[1] ?? null;
    return sendPage(
      reply,
      200,
      signInPage(pageContext(deps, request), {
        error: null,
        email: field(query, 'email').slice(0, 254),
        notice,
        next,
        recovery,
      }),
    );
  });

  scope.post('/sign-in', async (request, reply) => {
    const email = field(request.body, 'email');
    const next = consolePathOrNull(field(request.body, 'next'));
    let token: string;
    try {
      ({ token } = await signIn(
        db,
        { email, password: field(request.body, 'password'), ip: request.ip },
        deps.config.consoleSessions,
      ));
    } catch (err) {
      if (!(err instanceof ProblemError) || ![401, 403, 429].includes(err.status)) throw err;
      for (const [name, value] of Object.entries(err.headers)) void reply.header(name, value);
      return sendPage(
        reply,
        err.status,
        signInPage(pageContext(deps, request), { error: err.detail, email, notice: null, next, recovery }),
      );
    }
    // A new session id at every sign-in, and whatever session the browser held is ended: a
    // session id planted before sign-in (fixation) never becomes a signed-in one.
    const previous = request.cookies[SESSION_COOKIE];
    if (previous !== undefined && previous !== '') await endSession(db, previous);
    void reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps));
    void reply.clearCookie(PRE_SESSION_COOKIE, cookieOptions(deps));
    return reply.redirect(next ?? '/console/home', 303);
  });

  scope.post('/sign-out', async (request, reply) => {
    const session = requireSession(request);
    await endSession(db, session.token);
    await audit(db, { accountId: session.account.id, name: session.account.email }, 'session.signed_out');
    void reply.clearCookie(SESSION_COOKIE, cookieOptions(deps));
    // "Switch to …" on an invitation for another account comes back to it.
    const next = consolePathOrNull(field(request.body, 'next'));
    return reply.redirect(
      next !== null ? `/console/sign-in?${new URLSearchParams({ next }).toString()}` : '/console/sign-in',
      303,
    );
  });

  /** Whether the invitation's own account, another one or nobody is signed in. */
  const openerOf = (request: FastifyRequest, invitation: PendingInvitation): Opener => {
    const session = consoleState(request).session;
    if (session === null) return 'signedOut';
    return session.account.id === invitation.accountId ? 'invitee' : 'someoneElse';
  };

  // The token travels in the query (GET) and the form body (POST), never in the path: the logs
  // drop query values, so a link is never written to them.
  scope.get('/invitation', async (request, reply) => {
    const token = field(request.query, 'token');
    const found = await invitationState(db, token);
    if (found.state === 'used')
      return sendPage(reply, 410, invitationUsedPage(pageContext(deps, request), INVITATION_USED));
    if (found.state === 'dead') throw problem('gone', INVITATION_DEAD);
    const invitation = found.invitation;
    return sendPage(
      reply,
      200,
      acceptPage(pageContext(deps, request), {
        token,
        here: invitationPath(token),
        ...invitation,
        opener: openerOf(request, invitation),
        error: null,
      }),
    );
  });

  scope.post('/invitation', async (request, reply) => {
    const token = field(request.body, 'token');
    const found = await invitationState(db, token);
    if (found.state === 'used')
      return sendPage(reply, 410, invitationUsedPage(pageContext(deps, request), INVITATION_USED));
    if (found.state === 'dead') throw problem('gone', INVITATION_DEAD);
    const invitation = found.invitation;
    const opener = openerOf(request, invitation);
    if (invitation.hasAccount) {
      // Someone with an account accepts signed in as it; the form is offered to no one else.
      if (opener !== 'invitee')
        throw problem('forbidden', `Sign in as ${invitation.email} to accept this invitation.`);
      await db
        .transaction()
        .execute((trx) => acceptInvitation(trx, token, { signedInAs: invitation.accountId }));
      return reply.redirect(
        invitation.workspaceId !== null ? `/console/workspaces/${invitation.workspaceId}` : '/console/home',
        303,
      );
    }
    const displayName = field(request.body, 'displayName');
    const password = field(request.body, 'password');
    const again = (error: string) =>
      sendPage(
        reply,
        400,
        acceptPage(pageContext(deps, request), {
          token,
          here: invitationPath(token),
          ...invitation,
          displayName,
          opener,
          error,
        }),
      );
    if (password !== field(request.body, 'confirm')) return again('The two passwords are not the same.');
    try {
      await db.transaction().execute((trx) => acceptInvitation(trx, token, { displayName, password }));
    } catch (err) {
      if (err instanceof ProblemError && err.status === 400) return again(err.detail);
      throw err;
    }
    return reply.redirect('/console/sign-in?accepted=1', 303);
  });
}
