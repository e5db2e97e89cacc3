// A small stand-in for the voter-file upstream API, for tests, benchmarks and the README
// walkthrough. Run alone: `node dist/test/support/dev-upstream.js --port 9090`.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

/** A running development upstream. */
export interface DevUpstream {
  url: string;
  /** Requests received so far: tests wait on it instead of sleeping. */
  readonly requestsSeen: number;
  close(): Promise<void>;
}

/** The people `/v4/people/:id` knows; any other id answers 404 the way the upstream does. */
const PEOPLE: Record<string, { vanId: number; firstName: string; lastName: string }> = {
  '1001': { vanId: 1001, firstName: 'Ada', lastName: 'Lovelace' },
  '1002': { vanId: 1002, firstName: 'Grace', lastName: 'Hopper' },
};

/** 64 KiB whose byte i is i mod 256: `/v4/stream` repeats it, so byte n of a response is n mod 256. */
const PATTERN = Buffer.from(Array.from({ length: 65536 }, (_, i) => i % 256));

/** Options of `startDevUpstream`. */
export interface DevUpstreamOptions {
  port?: number;
  host?: string;
  /**
   * Benchmark mode: every request but `/v4/stream` gets one fixed, precomputed JSON answer without
   * parsing or checks, so a benchmark measures the proxy in front rather than this upstream.
   */
  minimal?: boolean;
}

/** Starts the upstream on 127.0.0.1 (port 0 picks a free one). */
export async function startDevUpstream(options: DevUpstreamOptions = {}): Promise<DevUpstream> {
  let requestsSeen = 0;
  const server = createServer((req, res) => {
    requestsSeen += 1;
    if (options.minimal === true && !req.url?.startsWith('/v4/stream')) return minimal(req, res);
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, upstreamError('INTERNAL_ERROR', String(err)));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    get requestsSeen() {
      return requestsSeen;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://upstream.invalid');
  const path = url.pathname;
  // The real upstream answers 401 in its own scheme when Basic credentials are missing or wrong
  // (here: the API key `invalid` stands for a wrong one).
  if (!/^Basic /i.test(req.headers.authorization ?? '') || apiKey(req.headers.authorization) === 'invalid') {
    await drain(req);
    return sendJson(
      res,
      401,
      upstreamError('AUTHORIZATION_ERROR', 'Authorization has been denied for this request.'),
    );
  }
  if (path === '/v4/echoes') {
    if (req.method === 'POST') {
      const body = await readBody(req);
      try {
        return sendJson(res, 200, JSON.parse(body.toString('utf8')) as unknown);
      } catch {
        return sendJson(res, 400, upstreamError('INVALID_PARAMETER', 'The request body is not valid JSON.'));
      }
    }
    await drain(req);
    return sendJson(res, 200, {
      method: req.method,
      path,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
    });
  }
  const person = /^\/v4\/people\/([^/]+)$/.exec(path);
  if (person !== null) {
    await drain(req);
    const found = PEOPLE[person[1] as string];
    if (found === undefined) {
      return sendJson(res, 404, upstreamError('NOT_FOUND', 'The specified resource cannot be found.'));
    }
    return sendJson(res, 200, found);
  }
  const status = /^\/v4\/status\/([1-5][0-9][0-9])$/.exec(path);
  if (status !== null) {
    await drain(req);
    return sendJson(
      res,
      Number(status[1]),
      upstreamError('UPSTREAM_STATUS', `Answered ${status[1]} on request.`),
    );
  }
  if (path === '/v4/stream') return stream(req, res, Number(url.searchParams.get('bytes') ?? 1048576));
  if (path === '/v4/slow') {
    await drain(req);
    const wait = Number(url.searchParams.get('ms') ?? 1000);
    const timer = setTimeout(() => sendJson(res, 200, { sleptMs: wait }), wait);
    res.once('close', () => clearTimeout(timer));
    return;
  }
  if (path === '/v4/upload' && req.method !== 'GET') {
    // Consumes any body, however large, and reports what arrived.
    const sha = createHash('sha256');
    let bytes = 0;
    for await (const chunk of req) {
      bytes += (chunk as Buffer).length;
      sha.update(chunk as Buffer);
    }
    return sendJson(res, 200, { bytes, sha256: sha.digest('hex') });
  }
  if (path === '/v4/webhooks/test' && req.method === 'POST') {
    const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as { callbackUrl?: unknown };
    if (typeof body.callbackUrl !== 'string') {
      return sendJson(res, 400, upstreamError('INVALID_PARAMETER', 'callbackUrl is required.'));
    }
    const callbackUrl = body.callbackUrl;
    sendJson(res, 202, { status: 'queued', callbackUrl });
    // Like the real upstream, the notification goes straight to the caller's URL, not via the proxy.
    void fetch(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'webhook.test', sentAt: new Date().toISOString() }),
    }).catch(() => undefined);
    return;
  }
  await drain(req);
  return sendJson(res, 404, upstreamError('NOT_FOUND', 'The specified resource cannot be found.'));
}

/** The benchmark mode's answer: a person record, as small and cheap as an upstream answer gets. */
const MINIMAL_BODY = Buffer.from(JSON.stringify({ ...PEOPLE['1001'], state: 'DC', party: 'D', phones: [] }));
const MINIMAL_HEADERS = [
  'content-type',
  'application/json; charset=utf-8',
  'content-length',
  String(MINIMAL_BODY.length),
];

function minimal(req: IncomingMessage, res: ServerResponse): void {
  const answer = () => {
    res.writeHead(200, MINIMAL_HEADERS);
    res.end(MINIMAL_BODY);
  };
  // GET bodies (none in practice) are left to node, which discards what a handler does not read.
  if (req.method === 'GET' || req.method === 'HEAD') return answer();
  // Other bodies are read to the end first: the proxy must have delivered them all.
  req.on('data', noop).once('end', answer);
}

function noop(): void {}

async function stream(req: IncomingMessage, res: ServerResponse, total: number): Promise<void> {
  await drain(req);
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  let sent = 0;
  while (sent < total && !res.destroyed) {
    const n = Math.min(PATTERN.length, total - sent);
    sent += n;
    if (!res.write(n === PATTERN.length ? PATTERN : PATTERN.subarray(0, n))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
  res.end();
}

function apiKey(authorization: string | undefined): string {
  const decoded = Buffer.from((authorization ?? '').slice(6), 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1, decoded.lastIndexOf('|'));
}

function upstreamError(code: string, text: string): { errors: { code: string; text: string }[] } {
  return { errors: [{ code, text }] };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function drain(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return;
  for await (const _ of req);
}

// Run as a script: print the URL and serve until interrupted.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--port');
  const port = at >= 0 ? Number(process.argv[at + 1]) : 9090;
  const upstream = await startDevUpstream({ port, minimal: process.argv.includes('--minimal') });
  console.log(`dev upstream listening on ${upstream.url}`);
  const stop = () => void upstream.close().then(() => process.exit(0));
  process.once('SIGINT', stop).once('SIGTERM', stop);
}
