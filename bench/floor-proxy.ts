// A reference for the report: node:http + an undici Pool, forwarding each request with none of the
// proxy's work (no checks, hop-by-hop filtering, limits, log or metrics). It was the floor of the
// proxy's former stack; the proxy now runs on net + llhttp (src/proxy/parser/) and should beat it.
// Usage: node dist/bench/floor-proxy.js <upstream-url>   (prints "ready <url>" on stderr)
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

const upstream = process.argv[2] ?? 'http://127.0.0.1:9090';
const pool = new Pool(upstream, { connections: 128, pipelining: 1 });

/** Streams one upstream answer back, the callback way (undici's cheapest handler shape). */
class Relay implements Dispatcher.DispatchHandler {
  private resume: (() => void) | null = null;
  constructor(private readonly res: ServerResponse) {
    res.on('drain', () => this.resume?.());
  }
  onConnect(): void {}
  onHeaders(status: number, raw: Buffer[], resume: () => void, text: string): boolean {
    this.resume = resume;
    const flat: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = (raw[i] as Buffer).toString('latin1');
      if (name.length !== 10 || name.toLowerCase() !== 'connection')
        flat.push(name, (raw[i + 1] as Buffer).toString('latin1'));
    }
    this.res.writeHead(status, text, flat);
    return true;
  }
  onData(chunk: Buffer): boolean {
    return this.res.write(chunk);
  }
  onComplete(): void {
    this.res.end();
  }
  onError(): void {
    if (!this.res.headersSent) this.res.writeHead(502);
    this.res.end();
  }
}

const server = createServer({ noDelay: true }, (req: IncomingMessage, res: ServerResponse) => {
  const headers: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== 4 || name.toLowerCase() !== 'host') headers.push(name, raw[i + 1] as string);
  }
  const body = req.headers['content-length'] !== undefined ? req : null;
  pool.dispatch(
    { path: req.url as string, method: req.method as Dispatcher.HttpMethod, headers, body },
    new Relay(res),
  );
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`ready http://127.0.0.1:${port}\n`);
});
process.once('SIGTERM', () => process.exit(0));
