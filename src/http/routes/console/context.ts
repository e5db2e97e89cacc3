// What every console route shares: the request's session and CSRF binding, cookies, pages.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import { csrfToken, type ConsoleSession } from '../../../domain/console/sessions.js';
import type { PageContext } from './pages.js';

export const SESSION_COOKIE = 'dx_console';
/** Binds the CSRF token of the sign-in and invitation forms, before there is a session. */
export const PRE_SESSION_COOKIE = 'dx_console_pre';

/** What the console's hook learned about a request. */
export interface ConsoleRequestState {
  session: ConsoleSession | null;
  /** The secret the request's CSRF token is bound to: the session token, or the pre-session one. */
  binding: string;
}

/** Set by the console scope's preHandler (index.ts). */
export const states = new WeakMap<FastifyRequest, ConsoleRequestState>();

/** The state of a console request (set by the scope's preHandler). */
export function consoleState(request: FastifyRequest): ConsoleRequestState {
  const state = states.get(request);
  if (state === undefined) throw new Error('console state read outside the console scope');
  return state;
}

/** The page context of a request: its CSRF token and who is signed in. */
export function pageContext(deps: ApiDeps, request: FastifyRequest): PageContext {
  const state = states.get(request);
  if (state === undefined) return { csrf: '', signedInAs: null };
  const account = state.session?.account;
  return {
    csrf: csrfToken(deps.signingSecret, state.binding),
    signedInAs:
      account !== undefined
        ? { email: account.email, displayName: account.display_name, isOperator: account.is_operator === 1 }
        : null,
  };
}

/** The signed-in session, or 401 (a GET is then sent to the sign-in page). */
export function requireSession(request: FastifyRequest): ConsoleSession {
  const session = consoleState(request).session;
  if (session === null) throw problem('unauthenticated', 'Sign in to continue.');
  return session;
}

/** Cookie attributes: HttpOnly, SameSite=Lax, Secure when the service is reached over HTTPS. */
export function cookieOptions(deps: ApiDeps) {
  return {
    path: '/console',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: deps.config.publicUrl.startsWith('https:'),
  };
}

/** Sends a page. */
export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page);
}

// A console path with an optional query: no scheme, no host, no `//` or `\` that a browser could
// read as another origin, no dot segments, no control characters.
const LOCAL_PATH = /^\/console\/[A-Za-z0-9\-._~%/]*(\?[A-Za-z0-9\-._~%=&+]*)?$/;

/** `value` when it is a page of this console to return to after sign-in (no open redirect), else null. */
export function consolePathOrNull(value: string): string | null {
  return LOCAL_PATH.test(value) && !value.includes('//') && !/\/\.\.?(\/|$|\?)/.test(value) ? value : null;
}
