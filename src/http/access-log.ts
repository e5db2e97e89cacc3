// One line per API request, as the proxy writes one per proxied request (src/proxy/access-log.ts),
// once the answer has gone out: Fastify's own pair (incoming, completed) is replaced through its
// LogController, whose other lines (stream and serializer errors) stay. The path keeps query keys
// but not their values (a signature, a page token); headers are never logged. A route with its own
// logLevel (probes, scrapes: warn) writes none at the default level.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { BatchedLines, jsonString } from '../lib/batched-lines.js';
import type { Logger } from '../lib/logger.js';
import { withoutQueryValues } from '../lib/redact.js';
import { addTraceFields, type TraceFields } from '../lib/request-id.js';
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

/** One access line's fields after the bindings of the request's logger (its id, its trace). */
type AccessEntry = ReturnType<typeof accessLine> & TraceFields & { reqId: string };

/**
 * The API's access lines, formatted here as pino would write them through the request's logger
 * (the role logger's bindings, then `reqId` and the trace fields) and batched (batched-lines.ts):
 * pino's path cost 12–13 % of a cached GET's instructions (docs/benchmarks.md).
 */
export class ApiAccessLines {
  private readonly lines: BatchedLines<AccessEntry>;

  /** `logger`: the role's logger, whose children the requests' loggers are (app.ts). */
  constructor(logger: Logger) {
    this.lines = new BatchedLines(logger, apiLine);
  }

  /** Whether `write` can be used: the role logger's destination takes lines formatted here. */
  get formatsHere(): boolean {
    return this.lines.formatsHere;
  }

  write(request: FastifyRequest, reply: FastifyReply): void {
    const entry: AccessEntry = { reqId: request.id, ...accessLine(request, reply) };
    addTraceFields(request.headers, entry);
    this.lines.write(entry);
  }

  /** Writes the lines not yet written (when the API closes). */
  flush(): Promise<void> {
    return this.lines.flush();
  }
}

/** An access line as pino writes `request.log.info(accessLine(…), 'api request')` after `head`. */
function apiLine(e: AccessEntry, head: string): string {
  const trace =
    e.traceparent === undefined
      ? ''
      : `,"traceparent":${jsonString(e.traceparent)}${e.tracestate === undefined ? '' : `,"tracestate":${jsonString(e.tracestate)}`}`;
  const from = e.remoteAddress === undefined ? '' : `"remoteAddress":${jsonString(e.remoteAddress)},`;
  return (
    `${head},"reqId":${jsonString(e.reqId)}${trace},"method":${jsonString(e.method)},"path":${jsonString(e.path)},` +
    `"route":${jsonString(e.route)},"status":${e.status},"bytesIn":${e.bytesIn},"bytesOut":${e.bytesOut},` +
    `"totalMs":${e.totalMs},${from}"msg":"api request"}\n`
  );
}

/** Fastify's request lines, as one access line per request (with its `reqId` and level; through
 * `lines` when given and it formats lines itself, else through the request's logger). */
export class AccessLogController extends LogController {
  constructor(private readonly lines: ApiAccessLines | null) {
    super();
  }

  override incomingRequest(): void {
    // The access line says it all once the answer is out.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) request.log.error({ ...accessLine(request, reply), err: error }, 'api request');
    else if (this.lines?.formatsHere !== true) request.log.info(accessLine(request, reply), 'api request');
    // The request's logger is a child of the role's (app.ts), at the route's level.
    else if ((request.log as Logger).isLevelEnabled('info')) this.lines.write(request, reply);
  }
}
