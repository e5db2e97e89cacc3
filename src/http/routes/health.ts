// Liveness, readiness (the database answers) and Prometheus metrics.
import { Type } from 'typebox';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problem } from '../../errors.js';
import { problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { HealthStatus } from '../schemas/platform.js';

/** For probes and scrapers on the operator's network: no credential. */
const OPEN = "No credential: meant for probes and scrapers on the operator's network.";

/** Registers /healthz, /readyz and /metrics at the root (outside /api/v1). */
export function healthRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers',
        description: OPEN,
        operationId: 'getHealth',
        tags: ['platform'],
        security: [],
        response: { 200: ref(HealthStatus), ...problems(400) },
      },
    },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the database answers',
        description: OPEN,
        operationId: 'getReadiness',
        tags: ['platform'],
        security: [],
        response: { 200: ref(HealthStatus), ...problems(400, 503) },
      },
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
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description: OPEN,
        operationId: 'getMetrics',
        tags: ['platform'],
        security: [],
        response: {
          200: {
            description: 'Prometheus text exposition format (version 0.0.4)',
            content: { 'text/plain': { schema: Type.String() } },
          },
          ...problems(400),
        },
      },
    },
    async (_request, reply) => {
      const extra = deps.extraMetrics !== undefined ? await deps.extraMetrics() : '';
      return reply.type(deps.metrics.contentType).send((await deps.metrics.metrics()) + extra);
    },
  );
}
