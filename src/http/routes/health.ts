// Liveness, readiness (not draining, and the database answers) and Prometheus metrics.
import { Type } from 'typebox';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { checkReadiness, metricsText } from '../probes.js';

/**
 * Registers /healthz, /readyz and, unless the process serves it on an admin port of its own,
 * /metrics at the root (outside /api/v1).
 */
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
      await checkReadiness(deps);
      return { status: 'ready' };
    },
  );
  if (deps.metricsOnAdminPort === true) return;
  app.get('/metrics', { ...quiet, schema: hide }, async (_request, reply) => {
    return reply.type(deps.metrics.contentType).send(await metricsText(deps));
  });
}
