// Sign-in, sign-out and accepting an invitation.
import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { audit } from '../../../domain/console/audit.js';
import { acceptInvitation, pendingInvitation } from '../../../domain/console/people.js';
import { endSession } from '../../../domain/console/sessions.js';
import { signIn } from '../../../domain/console/sign-in.js';
import {
  consoleState,
  cookieOptions,
  pageContext,
  PRE_SESSION_COOKIE,
  requireSession,
  sendPage,
  SESSION_COOKIE,
} from './context.js';
import { field } from './form.js';
import { acceptPage, signInPage } from './pages.js';

/** /console/sign-in, /console/sign-out, /console/invitation. */
export function accountRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/sign-in', async (request, reply) => {
    if (consoleState(request).session !== null) return reply.redirect('/console/home', 303);
    const accepted = (request.query as Record<string, unknown>).accepted === '1';
    return sendPage(
      reply,
      200,
      signInPage(pageContext(deps, request), {
        error: null,
        email: '',
        notice: accepted ? 'Your password is set. Sign in with it now.' : null,
      }),
    );
  });

  scope.post('/sign-in', async (request, reply) => {
    const email = field(request.body, 'email');
    let token: string;
    try {
      ({ token } = await signIn(
        db,
        { email, password: field(request.body, 'password'), ip: request.ip },
        deps.config.consoleSessions,
      ));
    } catch (err) {
      if (!(err instanceof ProblemError) || (err.status !== 401 && err.status !== 429)) throw err;
      for (const [name, value] of Object.entries(err.headers)) void reply.header(name, value);
      return sendPage(
        reply,
        err.status,
        signInPage(pageContext(deps, request), { error: err.detail, email, notice: null }),
      );
    }
    // A new session id at every sign-in, and whatever session the browser held is ended: a
    // session id planted before sign-in (fixation) never becomes a signed-in one.
    const previous = request.cookies[SESSION_COOKIE];
    if (previous !== undefined && previous !== '') await endSession(db, previous);
    void reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps));
    void reply.clearCookie(PRE_SESSION_COOKIE, cookieOptions(deps));
    return reply.redirect('/console/home', 303);
  });

  scope.post('/sign-out', async (request, reply) => {
    const session = requireSession(request);
    await endSession(db, session.token);
    await audit(db, { accountId: session.account.id, name: session.account.email }, 'session.signed_out');
    void reply.clearCookie(SESSION_COOKIE, cookieOptions(deps));
    return reply.redirect('/console/sign-in', 303);
  });

  // The token travels in the query (GET) and the form body (POST), never in the path: the logs
  // drop query values, so a link is never written to them.
  scope.get('/invitation', async (request, reply) => {
    const token = field(request.query, 'token');
    const pending = await pendingInvitation(db, token);
    return sendPage(reply, 200, acceptPage(pageContext(deps, request), { token, ...pending, error: null }));
  });

  scope.post('/invitation', async (request, reply) => {
    const token = field(request.body, 'token');
    const displayName = field(request.body, 'displayName');
    const password = field(request.body, 'password');
    const pending = await pendingInvitation(db, token);
    const again = (error: string) =>
      sendPage(reply, 400, acceptPage(pageContext(deps, request), { token, ...pending, displayName, error }));
    if (!pending.hasAccount && password !== field(request.body, 'confirm'))
      return again('The two passwords are not the same.');
    try {
      await db.transaction().execute((trx) => acceptInvitation(trx, token, { displayName, password }));
    } catch (err) {
      if (err instanceof ProblemError && err.status === 400) return again(err.detail);
      throw err;
    }
    return reply.redirect(pending.hasAccount ? '/console/home' : '/console/sign-in?accepted=1', 303);
  });
}
