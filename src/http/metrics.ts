// Request counters and latency histograms for the API, by route pattern (not raw URL: bounded labels).
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Records every API request in the shared registry. */
export function requestMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'dx_api_requests_total',
    help: 'API requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'dx_api_request_duration_seconds',
    help: 'API request latency',
    labelNames: ['method', 'route'] as const,
    // Uploads and exports stream for minutes: the buckets reach 5 minutes.
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = routeLabel(request.routeOptions.url);
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
}

/** Labels of the route patterns seen (a pattern is one of the app's routes: the map stays small). */
const routeLabels = new Map<string, string>();

/** The route pattern as a reader writes it: Fastify's escaped colon (`records::load`) unescaped,
 * a parameter's regex left out; requests that matched no route share one label. */
export function routeLabel(url: string | undefined): string {
  if (url === undefined) return 'unmatched';
  let label = routeLabels.get(url);
  if (label === undefined) {
    label = url.replace(/(:\w+)\([^)]*\)/g, '$1').replaceAll('::', ':');
    routeLabels.set(url, label);
  }
  return label;
}
