// The admin listener of a process whose probes are not on the API's port: a worker-only or
// proxy-only process, or one whose operator keeps /metrics off the public port (ADMIN_PORT).
// Three read-only routes on a bare node:http server: no framework needed, nothing else exposed.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listeningUrl } from '../lib/listening-url.js';
import { problem, ProblemError, toProblemBody } from '../errors.js';
import { isSafeRequestId } from '../lib/request-id.js';
import type { Logger } from '../lib/logger.js';
import { checkReadiness, metricsText, type ProbeDeps } from './probes.js';

/** A listening admin server. */
export interface AdminServer {
  server: Server;
  /** `http://host:port` as bound (the real port when ADMIN_PORT is 0). */
  url: string;
  close(): Promise<void>;
}

const ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/** Starts the admin server on `host:port`; rejects with the listen error (EADDRINUSE, …). */
export async function startAdminServer(
  host: string,
  port: number,
  deps: ProbeDeps & { logger: Logger },
): Promise<AdminServer> {
  const server = createServer((req, res) => {
    // Shutting down: a prober's keep-alive connection does not hold the listener open.
    if (deps.draining?.() === true) res.setHeader('connection', 'close');
    handle(req, res, deps).catch((err: unknown) => {
      deps.logger.error({ err }, 'admin request failed');
      if (!res.headersSent) sendProblem(req, res, problem('internal', 'An unexpected error occurred.'));
      else res.destroy();
    });
  });
  // Probes are short: a client that stalls does not hold a connection for long.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    url: listeningUrl(server),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: ProbeDeps): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!ROUTES.has(path)) return sendProblem(req, res, problem('notFound', `No route ${path} here.`));
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendProblem(
      req,
      res,
      problem('methodNotAllowed', `${path} answers GET and HEAD only.`, { headers: { allow: 'GET, HEAD' } }),
    );
  }
  switch (path) {
    case '/healthz':
      return send(req, res, 200, 'application/json; charset=utf-8', '{"status":"ok"}');
    case '/readyz':
      try {
        await checkReadiness(deps);
      } catch (err) {
        return sendProblem(req, res, err);
      }
      return send(req, res, 200, 'application/json; charset=utf-8', '{"status":"ready"}');
    default: {
      let text: string;
      try {
        text = await metricsText(deps);
      } catch (err) {
        // A proxy cluster worker that does not answer: say so rather than serve partial figures.
        return sendProblem(
          req,
          res,
          problem('unavailable', 'The metrics could not be collected.', { cause: err }),
        );
      }
      return send(req, res, 200, deps.metrics.contentType, text);
    }
  }
}

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-request-id': requestId(req),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendProblem(req: IncomingMessage, res: ServerResponse, err: unknown): void {
  const id = requestId(req);
  const body = JSON.stringify(toProblemBody(err, 'api', id));
  const p = err instanceof ProblemError ? err : null;
  for (const [name, value] of Object.entries(p?.headers ?? {})) res.setHeader(name, value);
  res.writeHead(p?.status ?? 500, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-request-id': id,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && isSafeRequestId(given) ? given : randomUUID();
}
