// Liveness, readiness (the database answers) and Prometheus metrics.
import { Type } from 'typebox';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problem } from '../../errors.js';
import { problems } from '../schemas/common.js';

/** Registers /healthz, /readyz and /metrics at the root (outside /api/v1). */
export function healthRoutes(app: TypedApp, deps: ApiDeps): void {
  const hide = { hide: true };
  // Probes and scrapes come every few seconds: their requests are not logged at info.
  const quiet = { logLevel: 'warn' } as const;
  app.get(
    '/healthz',
    { ...quiet, schema: { ...hide, response: { 200: Type.Object({ status: Type.String() }) } } },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    {
      ...quiet,
      schema: { ...hide, response: { 200: Type.Object({ status: Type.String() }), ...problems(503) } },
    },
    async () => {
      try {
        await deps.database.ping();
      } catch (err) {
        throw problem('unavailable', 'The database does not answer.', { cause: err });
      }
      return { status: 'ready' };
    },
  );
  app.get('/metrics', { ...quiet, schema: hide }, async (_request, reply) => {
    const extra = deps.extraMetrics !== undefined ? await deps.extraMetrics() : '';
    return reply.type(deps.metrics.contentType).send((await deps.metrics.metrics()) + extra);
  });
}
