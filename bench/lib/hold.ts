// Many idle keep-alive clients at once: each opens its own connection, sends one GET, reads the
// whole answer and keeps the connection open; then every client asks once more on the same
// connection. Plain sockets in this process (no pool, no agent), so nothing but the server decides
// how many connections stay open.
import { connect, type Socket } from 'node:net';

/** What holding the clients measured. */
export interface HoldResult {
  /** Clients whose both requests were answered 200 on one connection. */
  held: number;
  /** Clients that failed (refused, reset, closed, non-200). */
  failed: number;
}

const HEAD_END = '\r\n\r\n';

/** One client: a socket and a reader that resolves when a whole response has arrived. */
class Client {
  private buffered = '';
  private waiting: ((ok: boolean) => void) | null = null;
  private closed = false;
  readonly socket: Socket;

  constructor(url: URL) {
    this.socket = connect(Number(url.port), url.hostname);
    this.socket.setEncoding('latin1');
    this.socket.on('data', (text: string) => {
      this.buffered += text;
      this.check();
    });
    this.socket.on('error', () => this.settle(false));
    this.socket.on('close', () => {
      this.closed = true;
      this.settle(false);
    });
  }

  ask(request: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.socket.write(request, 'latin1');
    });
  }

  private check(): void {
    const end = this.buffered.indexOf(HEAD_END);
    if (end < 0) return;
    const head = this.buffered.slice(0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    // The upstream's minimal answer has a length; anything else counts as a failure.
    if (length === null) return this.settle(false);
    const total = end + HEAD_END.length + Number(length[1]);
    if (this.buffered.length < total) return;
    this.buffered = this.buffered.slice(total);
    this.settle(head.startsWith('HTTP/1.1 200'));
  }

  private settle(ok: boolean): void {
    const w = this.waiting;
    this.waiting = null;
    w?.(ok);
  }
}

/**
 * Opens `count` connections to `url`, asks once on each, then once more on each while all are
 * open; `between` runs after each round (to sample the server's memory). Closes them at the end.
 */
export async function holdClients(
  url: string,
  path: string,
  headers: Record<string, string>,
  count: number,
  between: (round: number) => void,
): Promise<HoldResult> {
  const u = new URL(url);
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  const request = `GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n${lines.join('')}\r\n`;
  const clients: Client[] = [];
  const ok = new Array<boolean>(count).fill(true);
  try {
    for (let round = 0; round < 2; round++) {
      // Connect in slices so the accept queue of neither server overflows.
      for (let i = 0; i < count; i += 100) {
        const slice: Promise<boolean>[] = [];
        for (let j = i; j < Math.min(count, i + 100); j++) {
          if (round === 0) clients.push(new Client(u));
          slice.push((clients[j] as Client).ask(request));
        }
        (await Promise.all(slice)).forEach((answered, k) => {
          if (!answered) ok[i + k] = false;
        });
      }
      between(round);
    }
  } finally {
    for (const c of clients) c.socket.destroy();
  }
  const held = ok.filter(Boolean).length;
  return { held, failed: count - held };
}
