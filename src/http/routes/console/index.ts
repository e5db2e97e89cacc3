// The web console at /console: server-rendered pages for people (docs/console.md says why).
// Everything here runs in its own encapsulated scope: cookies, form bodies, HTML error pages and
// security headers apply to the console only, never to the JSON API.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ProblemError, problem } from '../../../errors.js';
import { randomSecret } from '../../../lib/secrets.js';
import { asProblem, logProblem } from '../../problems.js';
import type { ApiDeps } from '../../deps.js';
import { consoleDb } from '../../../domain/console/db.js';
import { csrfTokenMatches, findSession } from '../../../domain/console/sessions.js';
import {
  consoleState,
  cookieOptions,
  pageContext,
  PRE_SESSION_COOKIE,
  sendPage,
  SESSION_COOKIE,
  states,
} from './context.js';
import { accountRoutes } from './account.js';
import { operatorRoutes } from './operator.js';
import { workspaceRoutes } from './workspaces.js';
import { consoleDatasetRoutes } from './datasets.js';
import { consoleJobRoutes } from './jobs.js';
import { workspaceKeyRoutes } from './workspace-key.js';
import { connectedAppRoutes } from './installations.js';
import { memberRoutes } from './members.js';
import { auditLogRoutes } from './audit-log.js';
import { invitationRoutes } from './invitations.js';
import { myAccountRoutes } from './my-account.js';
import { passwordResetRoutes } from './password-reset.js';
import { CONSOLE_CSS } from './style.js';
import { CONSOLE_JS } from './script.js';
import { errorPage } from './pages.js';
import { consoleUploadRoutes, type CsrfInBody } from './upload.js';

const FORM_BODY_LIMIT = 16 * 1024;

const TITLES: Record<number, string> = {
  400: 'Please check the form',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Not found',
  409: 'That cannot be done',
  410: 'Link no longer works',
  413: 'Too much data',
  429: 'Too many attempts',
};

/** The console's stylesheet and script: the same for everyone, cached, no session read. */
const STATIC_FILES = new Set(['/console/console.css', '/console/console.js']);

/** Registers the console's routes under the prefix it is given (/console). */
export async function consoleRoutes(scope: FastifyInstance, deps: ApiDeps): Promise<void> {
  const db = consoleDb(deps.db);
  // Every console route is HTML for people, outside the API's OpenAPI document: hidden here, once,
  // for routes added later too (the document keeps the route objects and reads `hide` when built).
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await scope.register(cookie);
  await scope.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  // Multipart bodies are left unread until a route streams them (the file form, upload.ts); the
  // limits there apply, and throwing on a file past its limit rather than truncating it.
  await scope.register(multipart, { throwFileSizeLimit: true });

  scope.addHook('onSend', async (request, reply) => {
    // Nothing from elsewhere may load, nothing may frame the console, links leak no URL (invitation
    // tokens), and no page is cached (they show secrets and per-person data). The script may send
    // requests to the console itself only (connect-src: the file form's upload with progress).
    void reply.header(
      'content-security-policy',
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    void reply.header('x-content-type-options', 'nosniff');
    void reply.header('x-frame-options', 'DENY');
    void reply.header('referrer-policy', 'no-referrer');
    if (!STATIC_FILES.has(request.routeOptions.url ?? '')) void reply.header('cache-control', 'no-store');
  });

  scope.addHook('preHandler', async (request, reply) => {
    if (STATIC_FILES.has(request.routeOptions.url ?? '')) return;
    const token = request.cookies[SESSION_COOKIE];
    const session =
      token !== undefined && token !== '' ? await findSession(db, token, deps.config.consoleSessions) : null;
    let binding = session?.token ?? request.cookies[PRE_SESSION_COOKIE] ?? '';
    if (binding === '' && request.method === 'GET') {
      binding = randomSecret('dxp_');
      void reply.setCookie(PRE_SESSION_COOKIE, binding, cookieOptions(deps));
    }
    states.set(request, { session, binding });
    // The file form's token is its first field, checked by its route before the file is read.
    const csrfInBody = (request.routeOptions.config as CsrfInBody).csrfInBody === true;
    if (request.method === 'POST' && !csrfInBody) {
      const body = request.body as Record<string, unknown> | null | undefined;
      if (binding === '' || !csrfTokenMatches(deps.signingSecret, binding, body?._csrf))
        throw problem(
          'forbidden',
          'This form has expired or did not come from this console. Go back, reload the page and try again.',
        );
    }
  });

  scope.setErrorHandler((err: FastifyError, request, reply) => {
    const p = err instanceof ProblemError ? err : asProblem(err);
    logProblem(request, err, p, 'console request failed');
    if (p.status === 401 && request.method === 'GET') return reply.redirect('/console/sign-in', 303);
    for (const [name, value] of Object.entries(p.headers)) void reply.header(name, value);
    const title = TITLES[p.status] ?? 'Something went wrong';
    const detail =
      p.status >= 500 ? 'The service could not do this just now. Try again in a moment.' : p.detail;
    return sendPage(reply, p.status, errorPage(pageContext(deps, request), p.status, title, detail));
  });
  scope.setNotFoundHandler((request, reply) =>
    sendPage(
      reply,
      404,
      errorPage(pageContext(deps, request), 404, TITLES[404]!, 'There is no console page at this address.'),
    ),
  );

  scope.get('/console.css', async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_CSS),
  );
  scope.get('/console.js', async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(CONSOLE_JS),
  );
  scope.get('/', async (request, reply) =>
    reply.redirect(consoleState(request).session !== null ? '/console/home' : '/console/sign-in', 303),
  );
  accountRoutes(scope, deps, db);
  operatorRoutes(scope, deps, db);
  workspaceRoutes(scope, deps, db);
  consoleDatasetRoutes(scope, deps, db);
  consoleJobRoutes(scope, deps, db);
  consoleUploadRoutes(scope, deps, db);
  workspaceKeyRoutes(scope, deps, db);
  connectedAppRoutes(scope, deps, db);
  memberRoutes(scope, deps, db);
  auditLogRoutes(scope, deps, db);
  invitationRoutes(scope, deps, db);
  myAccountRoutes(scope, deps, db);
  passwordResetRoutes(scope, deps, db);
}
