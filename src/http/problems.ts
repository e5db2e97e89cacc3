// The one error handler: renders every failure as application/problem+json (RFC 9457).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UNSUPPORTED_MEDIA_TYPE } from './body.js';
import { problem, ProblemError, toProblemBody, type ErrorKind, type FieldErrors } from '../errors.js';

const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: 'invalid',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'notFound',
  405: 'methodNotAllowed',
  409: 'conflict',
  410: 'gone',
  413: 'tooLarge',
  415: 'unsupportedMediaType',
  422: 'unprocessable',
  429: 'rateLimited',
};

interface ValidationIssue {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Turns ajv issues into `errors`: field path → messages (`schema.properties[0].name`). */
export function fieldErrors(context: string | undefined, issues: ValidationIssue[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    let path = issue.instancePath
      .split('/')
      .slice(1)
      .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
      .join('')
      .replace(/^\./, '');
    const missing = issue.params?.missingProperty;
    if (typeof missing === 'string') path = path === '' ? missing : `${path}.${missing}`;
    const extra = issue.params?.additionalProperty;
    if (typeof extra === 'string') path = path === '' ? extra : `${path}.${extra}`;
    const key = path === '' ? (context ?? 'request') : path;
    (errors[key] ??= []).push(issue.message ?? 'is invalid');
  }
  return errors;
}

/** Maps framework errors (validation, body parsing, limits) onto the catalogue. */
export function asProblem(err: FastifyError): ProblemError {
  if (err instanceof ProblemError) return err;
  if (Array.isArray(err.validation)) {
    const where = err.validationContext ?? 'request';
    return problem('invalid', `The ${where} is invalid.`, {
      errors: fieldErrors(where, err.validation),
    });
  }
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return problem('invalid', err.message, { code: 'invalid_json' });
  const status = err.statusCode ?? 500;
  const kind = KIND_BY_STATUS[status];
  if (kind !== undefined && status < 500) {
    const detail = err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? UNSUPPORTED_MEDIA_TYPE : err.message;
    return problem(kind, detail);
  }
  return problem('internal', 'An unexpected error occurred.');
}

/**
 * How an answered problem is logged: a 500, or any problem hiding a failure (its `cause`), at
 * error; a refusal decided on purpose (every download slot taken, the service draining) at warn,
 * as it calls for no one to act unless it repeats; anything below 500 not at all (the access line
 * has its status).
 */
export function logProblem(request: FastifyRequest, err: unknown, p: ProblemError, message: string): void {
  if (p.status < 500) return;
  if (p.status === 500 || p.cause !== undefined) request.log.error({ err }, message);
  else request.log.warn({ code: p.code, detail: p.detail }, message);
}

/** Sends a problem reply with its headers. */
export function sendProblem(reply: FastifyReply, request: FastifyRequest, p: ProblemError): FastifyReply {
  for (const [name, value] of Object.entries(p.headers)) void reply.header(name, value);
  // Refused before its body was read (a 413 mid-upload): the client may still be sending. Closing
  // the connection after the answer tells it at once, where keep-alive would leave it sending
  // into a server that no longer reads, and the connection open until the keep-alive timeout.
  if (!request.raw.complete) void reply.header('connection', 'close');
  return reply
    .code(p.status)
    .type('application/problem+json')
    .send(toProblemBody(p, 'api', String(request.id)));
}

/** Installs the error and not-found handlers on an instance. */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const p = asProblem(err);
    logProblem(request, err, p, 'request failed');
    return sendProblem(reply, request, p);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      request,
      problem('notFound', `No route for ${request.method} ${request.url.split('?')[0]}.`),
    ),
  );
}
