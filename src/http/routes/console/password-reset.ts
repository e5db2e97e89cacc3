// The way back in: /console/forgot-password (a link by mail when SMTP is configured, else who to
// ask), /console/reset-password (the link's page) and the operator's /console/operator/reset-links.
// A request by mail answers the same page whether or not the address has an account, and as fast:
// the account is looked up and the mail sent after the answer, in the background.
import type { FastifyInstance } from 'fastify';
import { ProblemError, problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { normalizeEmail } from '../../../domain/console/people.js';
import { hashPassword, passwordProblem } from '../../../domain/console/passwords.js';
import {
  countResetRequest,
  issueResetLink,
  pendingReset,
  RESET_TTL_MS,
  resetLink,
  resetMail,
  resetPassword,
} from '../../../domain/console/password-resets.js';
import { smtpMailer, type Mailer } from '../../../net/mail.js';
import { pageContext, sendPage } from './context.js';
import { field } from './form.js';
import { actorOf, requireOperator } from './operator-common.js';
import {
  forgotPasswordPage,
  resetLinkFormPage,
  resetLinkIssuedPage,
  resetMailSentPage,
  resetPasswordPage,
} from './pages-account.js';

export function passwordResetRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const mailer: Mailer | null = deps.config.mail !== null ? smtpMailer(deps.config.mail) : null;
  // Mail still on its way when the service stops is given the chance to go (the SMTP timeouts bound it).
  const sending = new Set<Promise<void>>();
  scope.addHook('onClose', async () => {
    await Promise.allSettled([...sending]);
    mailer?.close();
  });

  scope.get('/forgot-password', async (request, reply) =>
    sendPage(
      reply,
      200,
      forgotPasswordPage(pageContext(deps, request), {
        byMail: mailer !== null,
        email: '',
        error: null,
        ttlMs: RESET_TTL_MS,
      }),
    ),
  );

  scope.post('/forgot-password', async (request, reply) => {
    if (mailer === null)
      throw problem(
        'notFound',
        'This service does not send mail. Ask its operator for a password reset link.',
      );
    const given = field(request.body, 'email');
    let email: string;
    try {
      email = normalizeEmail(given);
      await countResetRequest(db, email);
    } catch (err) {
      if (!(err instanceof ProblemError) || (err.status !== 400 && err.status !== 429)) throw err;
      for (const [name, value] of Object.entries(err.headers)) void reply.header(name, value);
      return sendPage(
        reply,
        err.status,
        forgotPasswordPage(pageContext(deps, request), {
          byMail: true,
          email: given,
          error: err.detail,
          ttlMs: RESET_TTL_MS,
        }),
      );
    }
    const log = request.log;
    const task = (async () => {
      const link = await db.transaction().execute((trx) => issueResetLink(trx, null, email));
      if (link === null) return;
      await mailer.send({ to: link.email, ...resetMail(link, resetLink(deps.config.publicUrl, link.token)) });
    })()
      // Codes only: neither the link nor the address nor what the SMTP server said.
      .catch((err: unknown) =>
        log.warn(
          {
            code: (err as { code?: unknown }).code ?? null,
            responseCode: (err as { responseCode?: unknown }).responseCode ?? null,
          },
          'password reset mail not sent',
        ),
      )
      .finally(() => sending.delete(task));
    sending.add(task);
    return sendPage(
      reply,
      200,
      resetMailSentPage(pageContext(deps, request), { email, ttlMs: RESET_TTL_MS }),
    );
  });

  // As invitations: the token travels in the query and the form body, which logs leave out.
  scope.get('/reset-password', async (request, reply) => {
    const token = field(request.query, 'token');
    const { email } = await pendingReset(db, token);
    return sendPage(reply, 200, resetPasswordPage(pageContext(deps, request), { token, email, error: null }));
  });

  scope.post('/reset-password', async (request, reply) => {
    const token = field(request.body, 'token');
    const { email } = await pendingReset(db, token);
    const password = field(request.body, 'password');
    const why =
      password !== field(request.body, 'confirm')
        ? 'The two passwords are not the same.'
        : passwordProblem(password);
    if (why !== null)
      return sendPage(
        reply,
        400,
        resetPasswordPage(pageContext(deps, request), { token, email, error: why }),
      );
    const hash = await hashPassword(password);
    await db.transaction().execute((trx) => resetPassword(trx, token, hash));
    return reply.redirect('/console/sign-in?reset=1', 303);
  });

  scope.get('/operator/reset-links', async (request, reply) => {
    requireOperator(request);
    return sendPage(reply, 200, resetLinkFormPage(pageContext(deps, request), { email: '', error: null }));
  });

  scope.post('/operator/reset-links', async (request, reply) => {
    const session = requireOperator(request);
    const email = field(request.body, 'email');
    const again = (error: string) =>
      sendPage(reply, 400, resetLinkFormPage(pageContext(deps, request), { email, error }));
    let link;
    try {
      link = await db.transaction().execute((trx) => issueResetLink(trx, actorOf(session), email));
    } catch (err) {
      if (err instanceof ProblemError && err.status === 400) return again(err.detail);
      throw err;
    }
    // Only the operator reaches this form: saying that no account has the address reveals nothing.
    if (link === null) return again(`No console account has the email ${email.trim()}.`);
    return sendPage(
      reply,
      201,
      resetLinkIssuedPage(pageContext(deps, request), {
        email: link.email,
        link: resetLink(deps.config.publicUrl, link.token),
        expiresAt: link.expiresAt,
      }),
    );
  });
}
