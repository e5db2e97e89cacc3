// The one logger of every role: pino JSON lines on stdout with the same base fields (level, time,
// pid, hostname; each role's child adds `role`) and the same redaction, whichever roles a process
// runs. The API's Fastify is handed this logger; the worker and the proxy log through it directly.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Role } from '../config.js';
import { withoutQueryValues } from './redact.js';

export type { Logger };

/** Request headers that carry secrets (credentials, proxy IDs): never logged, at any level. */
const SECRET_HEADERS = ['authorization', 'x-proxyvid', 'x-migvid'];

/** Destinations made here take several lines in one write; a caller's own may expect exactly one. */
const takesBatches = new WeakSet<object>();

/**
 * Creates the process's logger. By default it writes asynchronously to stdout (pino flushes it at
 * exit): a synchronous write per line would cost the proxy more than much of a request's own work.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  let dest = destination;
  if (dest === undefined) {
    // No minLength: lines such as errors should not wait for more to come.
    dest = pino.destination({ dest: 1, sync: false });
    takesBatches.add(dest);
  }
  return pino(
    {
      level,
      redact: SECRET_HEADERS.map((name) => `req.headers[${JSON.stringify(name)}]`),
      serializers: {
        // An HTTP request as logged: the path without query values, never its headers.
        req: (req: { method: string; url: string; ip?: string }) => ({
          method: req.method,
          url: withoutQueryValues(req.url),
          remoteAddress: req.ip,
        }),
      },
    },
    dest,
  );
}

/** The logger a role logs through: the process's, with the role's name on every line. */
export function roleLogger(logger: Logger, role: Role): Logger {
  return logger.child({ role });
}

/** Whether `destination` was made by `createLogger` and so takes many lines in one write. */
export function takesManyLinesPerWrite(destination: object): boolean {
  return takesBatches.has(destination);
}
