// Liveness, readiness (not draining, and the database answers) and Prometheus metrics.
import { Type } from 'typebox';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { checkReadiness, metricsText } from '../probes.js';
import { sendProblem } from '../problems.js';
import { ProblemError } from '../../errors.js';
import { ref } from '../schemas/components.js';
import { HealthStatus } from '../schemas/platform.js';

/** For probes and scrapers on the operator's network: no credential. */
const OPEN = "No credential: meant for probes and scrapers on the operator's network.";

/**
 * Registers /healthz, /readyz and, unless the process serves it on an admin port of its own,
 * /metrics at the root (outside /api/v1).
 */
export function healthRoutes(app: TypedApp, deps: ApiDeps): void {
  // Probes and scrapes come every few seconds: their requests are not logged at info.
  const quiet = { logLevel: 'warn' } as const;
  app.get(
    '/healthz',
    {
      ...quiet,
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
      ...quiet,
      schema: {
        summary: 'Readiness: the database answers',
        description: OPEN,
        operationId: 'getReadiness',
        tags: ['platform'],
        security: [],
        response: { 200: ref(HealthStatus), ...problems(400, 503) },
      },
    },
    async (request, reply) => {
      try {
        await checkReadiness(deps);
      } catch (err) {
        // Draining is where a stopping process is meant to be: answered, not logged as a failure.
        if (deps.draining?.() === true && err instanceof ProblemError)
          return sendProblem(reply, request, err);
        throw err;
      }
      return { status: 'ready' };
    },
  );
  if (deps.metricsOnAdminPort === true) return;
  app.get(
    '/metrics',
    {
      ...quiet,
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
      return reply.type(deps.metrics.contentType).send(await metricsText(deps));
    },
  );
}
