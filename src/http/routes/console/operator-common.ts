// What the operator's routes share: only the operator may reach them (anyone else signed in gets
// the console's ordinary 404, so the pages' existence is not confirmed), who acts for the audit
// log, and the checks of their path parameters and form fields.
import { checkedName } from '../../../domain/identity/names.js';
import type { FastifyRequest } from 'fastify';
import { problem } from '../../../errors.js';
import type { Actor } from '../../../domain/console/audit.js';
import type { ConsoleSession } from '../../../domain/console/sessions.js';
import { requireSession } from './context.js';
import { field } from './form.js';

export const NOT_FOUND = 'There is no console page at this address.';

/** The operator's session; 401 without one (a GET goes to sign-in), 404 for anyone else. */
export function requireOperator(request: FastifyRequest): ConsoleSession {
  const session = requireSession(request);
  if (session.account.is_operator !== 1) throw problem('notFound', NOT_FOUND);
  return session;
}

/** The audit log's name for the signed-in operator. */
export function actorOf(session: ConsoleSession): Actor {
  return { accountId: session.account.id, name: session.account.email };
}

/** A path parameter that must have `shape`; otherwise the page does not exist (404). */
export function param(params: unknown, name: string, shape: RegExp): string {
  const value = (params as Record<string, string | undefined>)[name] ?? '';
  if (!shape.test(value)) throw problem('notFound', NOT_FOUND);
  return value;
}

/** A name field by the identity domain's one rule (trimmed, 1 to NAME_MAX), or a 400 naming it. */
export function requiredName(body: unknown, name: string, label: string): string {
  return checkedName(field(body, name), label);
}

/** A field whose value must be one of `choices`, or a 400. */
export function oneOf<T extends string>(
  body: unknown,
  name: string,
  choices: readonly T[],
  label: string,
): T {
  const value = field(body, name);
  const found = choices.find((c) => c === value);
  if (found === undefined) throw problem('invalid', `Choose ${label}: ${choices.join(' or ')}.`);
  return found;
}
