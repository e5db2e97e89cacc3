// One line per API request, as the proxy writes one per proxied request (src/proxy/access-log.ts),
// once the answer has gone out: Fastify's own pair (incoming, completed) is replaced through its
// LogController, whose other lines (stream and serializer errors) stay. The path keeps query keys
// but not their values (a signature, a page token); headers are never logged. A route with its own
// logLevel (probes, scrapes: warn) writes none at the default level.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { withoutQueryValues } from '../lib/redact.js';
import { routeLabel } from './metrics.js';

/** A length header as a number; null when absent (a chunked body) or not a number. */
function lengthOf(value: unknown): number | null {
  const n = Number(Array.isArray(value) ? value[0] : value);
  return value !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The fields of one API access line. */
export function accessLine(request: FastifyRequest, reply: FastifyReply) {
  return {
    method: request.method,
    path: withoutQueryValues(request.url),
    route: routeLabel(request.routeOptions.url),
    status: reply.statusCode,
    bytesIn: lengthOf(request.headers['content-length']),
    bytesOut: lengthOf(reply.getHeader('content-length')),
    totalMs: Math.round(reply.elapsedTime * 10) / 10,
    remoteAddress: request.ip,
  };
}

/** Fastify's request lines, as one access line per request (through the request's logger, with
 * its `reqId` and level). */
export class AccessLogController extends LogController {
  override incomingRequest(): void {
    // The access line says it all once the answer is out.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) request.log.error({ ...accessLine(request, reply), err: error }, 'api request');
    else request.log.info(accessLine(request, reply), 'api request');
  }
}
