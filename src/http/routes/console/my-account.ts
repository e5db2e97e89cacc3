// /console/account: the signed-in person's display name, email and password.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import {
  checkPasswordChange,
  renameAccount,
  storeNewPassword,
} from '../../../domain/console/account-settings.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { field } from './form.js';
import { choiceQuery } from './params.js';
import { accountPage } from './pages-account.js';

const NOTICES = {
  name: 'Your display name is saved.',
  password: 'Your password is changed. Everywhere else you were signed in, you are signed out.',
} as const;

export function myAccountRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  /** The account page, with a notice or the error of one of its forms. */
  const page = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { notice?: string; nameError?: string; passwordError?: string; displayName?: string } = {},
  ) => {
    const { account } = requireSession(request);
    return sendPage(
      reply,
      status,
      accountPage(pageContext(deps, request), {
        email: account.email,
        displayName: extra.displayName ?? account.display_name,
        notice: extra.notice ?? null,
        nameError: extra.nameError ?? null,
        passwordError: extra.passwordError ?? null,
      }),
    );
  };

  /** A 400 (or 429) of a form, shown on the page beside that form; anything else goes on. */
  const refusal = (err: unknown): ProblemError | null =>
    err instanceof ProblemError && (err.status === 400 || err.status === 429) ? err : null;

  scope.get('/account', async (request, reply) => {
    requireSession(request);
    const done = choiceQuery(request.query, 'done', NOTICES);
    return page(request, reply, 200, done !== null ? { notice: NOTICES[done] } : {});
  });

  scope.post('/account/name', async (request, reply) => {
    const { account } = requireSession(request);
    const displayName = field(request.body, 'displayName');
    try {
      await db.transaction().execute((trx) => renameAccount(trx, account, displayName));
    } catch (err) {
      const refused = refusal(err);
      if (refused === null) throw err;
      return page(request, reply, refused.status, { nameError: refused.detail, displayName });
    }
    return reply.redirect('/console/account?done=name', 303);
  });

  scope.post('/account/password', async (request, reply) => {
    const session = requireSession(request);
    try {
      // The slow checks (two scrypt runs) happen before the transaction that stores the result.
      const hash = await checkPasswordChange(db, session.account, {
        current: field(request.body, 'current'),
        next: field(request.body, 'password'),
        confirm: field(request.body, 'confirm'),
        ip: request.ip,
      });
      await db.transaction().execute((trx) => storeNewPassword(trx, session.account, hash, session.token));
    } catch (err) {
      const refused = refusal(err);
      if (refused === null) throw err;
      for (const [name, value] of Object.entries(refused.headers)) void reply.header(name, value);
      return page(request, reply, refused.status, { passwordError: refused.detail });
    }
    return reply.redirect('/console/account?done=password', 303);
  });
}
