// The `Idempotency-Key` header on the routes that create something (#12): one set of route hooks,
// spread into each such route's options, around handlers that know nothing of it. The rules (key
// syntax, window, lease, fingerprint, claim) are domain/idempotency.
//
// preValidation  refuses a malformed key (400 naming the header) before anything else is checked
// preHandler     after auth and schema validation: claims the key, or replays the first answer,
//                or refuses (409 while the first request with the key runs, 422 for another request)
// onSend         keeps the answer of the request holding the claim (any status below 500), or
//                releases the claim on a 5xx so a retry runs the request again
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { problem } from '../errors.js';
import { deriveKey, isSealed, seal, unseal } from '../lib/secrets.js';
import {
  claimIdempotencyKey,
  IDEMPOTENCY_LEASE_MS,
  isValidIdempotencyKey,
  recordAnswer,
  releaseClaim,
  requestFingerprint,
  type Claim,
} from '../domain/idempotency/idempotency-keys.js';
import { installationOf } from './auth.js';
import type { ApiDeps } from './deps.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Set on an answer that is the replay of an earlier one (the name Stripe uses). */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** The header in a route's schema, for the OpenAPI document (and ajv as a second check). */
export const IdempotencyKeyHeaders = Type.Object({
  [IDEMPOTENCY_KEY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7E]+$',
      description:
        'Makes the request safe to retry: the same key from the same installation within 24 hours ' +
        'answers the first answer again (header Idempotent-Replayed: true) and creates nothing new. ' +
        'The same key with another request is 422; while the first request with it runs, 409.',
    }),
  ),
});

/** Problem statuses the hooks add to a route's answers. */
export const IDEMPOTENCY_PROBLEMS = [400, 409, 422] as const;

const MALFORMED = 'must be 1 to 255 visible ASCII characters (%x21-7E)';

/** The claim held by a request while its handler runs. */
const claims = new WeakMap<FastifyRequest, Claim>();

/** The key of a request, undefined without one, or a 400 problem naming the header. */
function keyOf(request: FastifyRequest): string | undefined {
  const value = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  // Node joins a repeated header with ", ", which the character rule refuses as well.
  if (typeof value !== 'string' || !isValidIdempotencyKey(value)) {
    throw problem('invalid', `The Idempotency-Key header ${MALFORMED}.`, {
      errors: { 'Idempotency-Key': [MALFORMED] },
    });
  }
  return value;
}

/** The route hooks that make a route idempotent; spread them into its options. */
export function idempotentRoute(deps: ApiDeps) {
  // Kept answers hold credentials (a signed upload URL, the caller's own records:load URL): they
  // are stored sealed, bound to their installation and key.
  const answerKey = deriveKey(deps.signingSecret, 'dx/idempotency-answer/v1');
  const context = (installationId: number, key: string) => `${installationId}:${key}`;
  return {
    async preValidation(request: FastifyRequest): Promise<void> {
      keyOf(request);
    },

    async preHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
      const key = keyOf(request);
      if (key === undefined) return undefined;
      const fingerprint = requestFingerprint({
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        params: request.params,
        query: request.query,
        body: request.body,
      });
      const outcome = await claimIdempotencyKey(
        deps.db,
        installationOf(request).installationId,
        key,
        fingerprint,
      );
      switch (outcome.kind) {
        case 'claimed':
          claims.set(request, outcome.claim);
          return undefined;
        case 'replay': {
          const stored = outcome.answer.body;
          // Answers kept before they were sealed read as they are.
          const body = isSealed(stored)
            ? unseal(answerKey, stored, context(installationOf(request).installationId, key))
            : stored;
          if (body === null) {
            throw problem(
              'conflict',
              'The answer kept for this Idempotency-Key can no longer be read (the signing secret changed); send a new key.',
              { code: 'idempotency_key_unreadable' },
            );
          }
          return reply
            .code(outcome.answer.status)
            .type(outcome.answer.contentType)
            .header(REPLAYED_HEADER, 'true')
            .send(body);
        }
        case 'inProgress':
          throw problem(
            'conflict',
            'A request with this Idempotency-Key is still being handled; retry it shortly to get its answer.',
            { code: 'idempotency_key_in_progress', headers: { 'retry-after': '1' } },
          );
        case 'mismatch':
          throw problem(
            'unprocessable',
            'This Idempotency-Key was used within the last 24 hours for a different request ' +
              '(method, path, query or body); send a new key with a new request.',
            {
              code: 'idempotency_key_reused',
              errors: { 'Idempotency-Key': ['already used for a different request'] },
            },
          );
      }
      // A new outcome fails to compile here until it is handled above.
      const unhandled: never = outcome;
      return unhandled;
    },

    async onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const claim = claims.get(request);
      if (claim === undefined) return payload;
      claims.delete(request);
      try {
        const body =
          typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : null;
        if (reply.statusCode >= 500 || body === null) {
          await releaseClaim(deps.db, claim);
        } else {
          const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
          const sealed = seal(answerKey, body, context(claim.installationId, claim.key));
          const kept = await recordAnswer(deps.db, claim, {
            status: reply.statusCode,
            contentType,
            body: sealed,
          });
          if (!kept) {
            request.log.warn(
              { leaseMs: IDEMPOTENCY_LEASE_MS },
              'idempotency claim lapsed before the answer; another request took the key over',
            );
          }
        }
      } catch (err) {
        // The answer still goes out: the caller has what it asked for, and a 500 would only invite
        // a retry that the missing record could not recognise.
        request.log.error({ err }, 'could not keep the answer of an idempotent request');
      }
      return payload;
    },
  };
}
