// What /healthz, /readyz and /metrics answer, wherever they are served: on the API's port (Fastify
// routes) or on an admin port of their own (admin-server.ts).
import type { Registry } from 'prom-client';
import { problem } from '../errors.js';
import type { Database } from '../storage/db/database.js';

/** What the probes read. */
export interface ProbeDeps {
  database: Pick<Database, 'ping'>;
  /** The process's shared registry. */
  metrics: Registry;
  /** More Prometheus text for /metrics (the proxy's, summed over its cluster workers). */
  extraMetrics?: () => Promise<string>;
  /** Whether the process is shutting down (SIGTERM): it is then no longer ready. */
  draining?: () => boolean;
}

/** A database that has not answered within this time counts as unreachable. */
export const READINESS_TIMEOUT_MS = 2000;

/** Resolves when the process is ready for traffic; otherwise throws an `unavailable` problem. */
export async function checkReadiness(deps: ProbeDeps): Promise<void> {
  if (deps.draining?.() === true) throw problem('unavailable', 'The service is shutting down.');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('no answer in time')), READINESS_TIMEOUT_MS);
  });
  try {
    await Promise.race([deps.database.ping(), late]);
  } catch (err) {
    throw problem('unavailable', 'The database does not answer.', { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

/** The Prometheus text of /metrics: the shared registry, then the proxy's figures. */
export async function metricsText(deps: ProbeDeps): Promise<string> {
  const [own, extra] = await Promise.all([
    deps.metrics.metrics(),
    deps.extraMetrics !== undefined ? deps.extraMetrics() : '',
  ]);
  return own + extra;
}
