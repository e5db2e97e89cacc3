// The proxy at the byte level: pipelining, malformed and smuggling-shaped requests, clients that go
// away mid-body, responses arriving in tiny pieces, and upstream connections that must not be reused.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createParser, parserBackend, RESPONSE } from '../../src/proxy/parser/index.js';
import { AUTH, eventually, startStack, type Stack } from './stack.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A raw client connection that collects the responses it receives, parsed with llhttp. */
class RawClient {
  readonly socket: Socket;
  readonly responses: RawResponse[] = [];
  closed = false;
  private body: Buffer[] = [];
  private current: RawResponse | null = null;

  private constructor(socket: Socket, headRequests: boolean[]) {
    this.socket = socket;
    const parser = createParser(RESPONSE, {
      onHeadersComplete: (
        _a: number,
        _b: number,
        raw: string[],
        _m: number,
        _u: string,
        status: number,
      ): number => {
        const headers: Record<string, string> = {};
        for (let i = 0; i < raw.length; i += 2)
          headers[(raw[i] as string).toLowerCase()] = raw[i + 1] as string;
        this.current = { status, headers, body: Buffer.alloc(0) };
        return headRequests.shift() === true ? 1 : 0;
      },
      onBody: (chunk: Buffer) => void this.body.push(chunk),
      onMessageComplete: () => {
        if (this.current === null) return;
        this.current.body = Buffer.concat(this.body);
        this.body = [];
        this.responses.push(this.current);
        this.current = null;
      },
    });
    socket.on('data', (data: Buffer) => {
      const r = parser.execute(data);
      if (r instanceof Error) socket.destroy(r);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      parser.finish();
      this.closed = true;
    });
  }

  static async open(url: string, headRequests: boolean[] = []): Promise<RawClient> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawClient(socket, headRequests);
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }

  async waitFor(n: number, timeoutMs = 3000): Promise<RawResponse[]> {
    await eventually(() => this.responses.length >= n || this.closed, timeoutMs);
    return this.responses;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Writes `wire` one byte per packet, each on a later turn of the event loop. */
function writeBytewise(socket: Socket, wire: string): void {
  socket.setNoDelay(true);
  let i = 0;
  const next = () => {
    if (i >= wire.length) return;
    socket.write(wire[i++] as string, 'latin1');
    setImmediate(next);
  };
  next();
}

/** A GET of `path` the proxy's checks pass, for a stack in front of a raw upstream. */
const checkedGet = (s: Stack, path = '/x') =>
  `GET ${path} HTTP/1.1\r\nHost: p\r\nAuthorization: ${AUTH}\r\nX-PROXYVID: ${s.id}\r\n\r\n`;

/**
 * Runs `fn` against a proxy (configured with `env`) in front of a raw upstream, whose `answer` gets
 * each request's head and the socket; stops both after.
 */
async function withRawUpstream(
  answer: (head: string, socket: Socket) => void,
  fn: (s: Stack, up: { connections: () => number }) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const up = await rawUpstream(answer);
  const s = await startStack(env, up.url);
  try {
    await fn(s, up);
  } finally {
    await s.close();
    up.server.close();
  }
}

async function rawUpstream(
  answer: (head: string, socket: Socket) => void,
): Promise<{ url: string; server: Server; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    let pending = '';
    socket.on('data', (data: Buffer) => {
      pending += data.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        answer(head, socket);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    connections: () => connections,
  };
}

void describe('proxy on the wire', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ PROXY_BODY_LIMIT_BYTES: '100000' });
  });
  after(async () => {
    await s.close();
  });

  const head = (method: string, path: string, extra = '') =>
    `${method} ${path} HTTP/1.1\r\nHost: proxy\r\nAuthorization: ${AUTH}\r\nX-PROXYVID: ${s.id}\r\n${extra}\r\n`;

  void it('checks every request on a keep-alive connection, not only its first', async () => {
    // The connection remembers what its last request proved; a change, or a reload of the active
    // IDs, must be checked afresh.
    const { id, info } = await s.store.create('revoked mid-connection');
    await s.proxy.proxyIds.refresh();
    const c = await RawClient.open(s.proxy.url);
    const get = (auth: string, vid: string) =>
      `GET /v4/echoes HTTP/1.1\r\nHost: proxy\r\nAuthorization: ${auth}\r\nX-PROXYVID: ${vid}\r\n\r\n`;
    const malformed = `Basic ${Buffer.from('no-key-here').toString('base64')}`;
    const steps: [string, string][] = [
      [AUTH, id],
      [malformed, id],
      [AUTH, id],
      [AUTH, s.id],
      [AUTH, id],
      [AUTH, 'pv_unknown0000000000000000000000'],
    ];
    for (const [n, [auth, vid]] of steps.entries()) {
      c.send(get(auth, vid));
      await c.waitFor(n + 1);
    }
    const lines = s.logLines.slice(-steps.length);
    await s.store.revoke(info.prefix);
    await s.proxy.proxyIds.refresh();
    c.send(get(AUTH, id));
    await c.waitFor(steps.length + 1);
    assert.deepEqual(
      c.responses.map((r) => r.status),
      [200, 401, 200, 200, 200, 400, 400],
    );
    assert.equal(c.closed, false);
    // Each request is logged under the ID it sent.
    assert.equal(lines[2]?.proxyId, info.prefix);
    assert.notEqual(lines[3]?.proxyId, info.prefix);
    assert.equal(lines[4]?.proxyId, info.prefix);
    c.close();
  });

  void it('answers pipelined requests in order on one connection', async () => {
    const c = await RawClient.open(s.proxy.url, [false, true, false, false, false, false, false]);
    const body = '{"n":3}';
    const json = 'Content-Type: application/json\r\n';
    // Requests with and without bodies alternate: a request without one ends with its head, a
    // request with one (by length or chunked) only when its body has been read.
    c.send(
      head('GET', '/v4/echoes?n=1') +
        head('HEAD', '/v4/people/1001') +
        head('POST', '/v4/echoes', `${json}Content-Length: ${body.length}\r\n`) +
        body +
        head('GET', '/v4/people/404404') +
        head('POST', '/v4/echoes', `${json}Transfer-Encoding: chunked\r\n`) +
        '3\r\n{"n\r\n4\r\n":5}\r\n0\r\n\r\n' +
        head('POST', '/v4/echoes', `${json}Content-Length: 0\r\n`) +
        head('GET', '/v4/echoes?n=7'),
    );
    const r = await c.waitFor(7);
    c.close();
    assert.deepEqual(
      r.map((x) => x.status),
      [200, 200, 200, 404, 200, 400, 200],
    );
    assert.deepEqual((JSON.parse(r[0]!.body.toString()) as { query: unknown }).query, { n: '1' });
    assert.equal(r[1]!.body.length, 0);
    assert.equal(r[2]!.body.toString(), body);
    assert.equal(r[4]!.body.toString(), '{"n":5}');
    // The upstream saw an empty body, which it refuses as JSON.
    assert.match(r[5]!.body.toString(), /not valid JSON/);
    assert.deepEqual((JSON.parse(r[6]!.body.toString()) as { query: unknown }).query, { n: '7' });
  });

  void it('answers a malformed request with 400 and closes the connection', async () => {
    for (const bad of [
      'GET /v4/echoes HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'NOT A REQUEST\r\n\r\n',
      // Request smuggling shapes: both framings, or two different lengths.
      'POST /v4/echoes HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'POST /v4/echoes HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde',
      'GET /v4/echoes HTTP/1.1\r\n\r\n', // no Host
      'GET /v4/echoes HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n', // obsolete line folding
      'GET /v4/echoes HTTP/1.1\r\nHost: x\nX-B: bare LF\r\n\r\n',
      'GET /v4/echoes HTTP/1.1\r\nHost: x\r\nX-C: a\u0000b\r\n\r\n',
    ]) {
      const c = await RawClient.open(s.proxy.url);
      c.send(bad);
      await eventually(() => c.closed, 3000);
      assert.equal(c.responses.length, 1, bad);
      assert.equal(c.responses[0]!.status, 400, bad);
      assert.equal(c.responses[0]!.headers.connection, 'close');
    }
    const huge = await RawClient.open(s.proxy.url);
    huge.send(`GET /v4/echoes HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
    await eventually(() => huge.closed, 3000);
    assert.equal(huge.responses[0]?.status, 431);
  });

  void it('a client that disconnects mid-body is logged as 499 and the proxy carries on', async () => {
    const before = s.logLines.length;
    const c = await RawClient.open(s.proxy.url);
    c.send(head('POST', '/v4/upload', 'Content-Length: 90000\r\n') + 'x'.repeat(30000));
    await new Promise((r) => setTimeout(r, 100));
    c.close();
    await eventually(() => s.logLines.slice(before).some((l) => l.msg === 'proxy request'));
    const line = s.logLines.slice(before).find((l) => l.msg === 'proxy request') as Record<string, unknown>;
    assert.equal(line.status, 499);
    assert.equal(line.error, 'client closed');
    const again = await RawClient.open(s.proxy.url);
    again.send(head('GET', '/v4/echoes'));
    assert.equal((await again.waitFor(1))[0]!.status, 200);
    again.close();
  });

  void it('a chunked request body over the limit gets 413 and the connection closes', async () => {
    const c = await RawClient.open(s.proxy.url);
    c.send(head('POST', '/v4/upload', 'Transfer-Encoding: chunked\r\n'));
    const piece = Buffer.alloc(30000, 97);
    for (let i = 0; i < 4; i++) c.send(Buffer.concat([Buffer.from('7530\r\n'), piece, Buffer.from('\r\n')]));
    await eventually(() => c.closed, 3000);
    assert.equal(c.responses[0]!.status, 413);
  });

  void it('the body limit holds for a chunked body that arrives while an earlier request is in flight', async () => {
    const c = await RawClient.open(s.proxy.url);
    const piece = Buffer.alloc(0x8000, 98);
    const chunk = Buffer.concat([Buffer.from('8000\r\n'), piece, Buffer.from('\r\n')]);
    c.send(
      Buffer.concat([
        Buffer.from(
          head('GET', '/v4/slow?ms=200') + head('POST', '/v4/upload', 'Transfer-Encoding: chunked\r\n'),
        ),
        chunk,
        chunk,
        chunk,
        chunk,
        Buffer.from('0\r\n\r\n'),
      ]),
    );
    const r = await c.waitFor(2);
    assert.deepEqual(
      r.map((x) => x.status),
      [200, 413],
    );
    c.close();
  });

  void it("frees each connection's parser after the connection closes", async () => {
    // Node's binding's parsers are not garbage-collected, and the wasm ones live in the instance's
    // memory: a connection that did not close its own would leak it and what its callbacks reach.
    const backend = parserBackend();
    const create = backend.create.bind(backend);
    let closed = 0;
    backend.create = (type, callbacks) => {
      const parser = create(type, callbacks);
      const close = parser.close.bind(parser);
      parser.close = () => {
        closed++;
        close();
      };
      return parser;
    };
    try {
      for (let i = 0; i < 10; i++) {
        const c = await RawClient.open(s.proxy.url);
        c.send(head('GET', '/v4/echoes'));
        await c.waitFor(1);
        c.close();
      }
      await eventually(() => closed >= 10);
    } finally {
      backend.create = create;
    }
  });

  void it('keeps one client connection for many requests', async () => {
    const c = await RawClient.open(s.proxy.url);
    for (let i = 0; i < 50; i++) {
      c.send(head('GET', `/v4/echoes?i=${i}`));
      await c.waitFor(i + 1);
    }
    assert.equal(c.responses.length, 50);
    assert.ok(c.responses.every((r) => r.status === 200));
    assert.equal(c.closed, false);
    c.close();
  });
});

void describe('proxy on the wire: upstream framing', () => {
  void it('a chunked response split into one-byte packets arrives whole, re-chunked', async () => {
    const body = 'hello, world! '.repeat(20);
    const wire = `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nX-Up: 1\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    await withRawUpstream(
      (_head, socket) => {
        writeBytewise(socket, wire);
      },
      async (s) => {
        const c = await RawClient.open(s.proxy.url);
        c.send(checkedGet(s));
        const [r] = await c.waitFor(1, 10000);
        assert.equal(r!.status, 200);
        assert.equal(r!.headers['transfer-encoding'], 'chunked');
        assert.equal(r!.headers['x-up'], '1');
        assert.equal(r!.body.toString(), body);
        c.close();
      },
    );
  });

  void it('small answers by length, split into one-byte packets, arrive whole on a reused connection', async () => {
    // Bodies by length are handed on from the read buffer, however small: the bytes of one read
    // must be taken before the next read overwrites them.
    const bodies = ['{"a":1}', 'x'.repeat(300), ''];
    let n = 0;
    await withRawUpstream(
      (_head, socket) => {
        const body = bodies[n++ % bodies.length] as string;
        writeBytewise(socket, `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      },
      async (s, up) => {
        const c = await RawClient.open(s.proxy.url);
        for (let i = 0; i < 2 * bodies.length; i++) {
          c.send(checkedGet(s));
          const r = (await c.waitFor(i + 1, 10000))[i];
          assert.equal(r!.status, 200);
          assert.equal(r!.body.toString(), bodies[i % bodies.length]);
        }
        assert.equal(up.connections(), 1);
        c.close();
      },
    );
  });

  void it('keeps idle connections on both sides across the sweeps of their timeouts', async () => {
    // The sweepers compare each connection's times with the proxy's clock (clock.ts): times taken
    // on another clock would close idle connections at the first sweep.
    await withRawUpstream(
      (_head, socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      },
      async (s, up) => {
        const c = await RawClient.open(s.proxy.url);
        c.send(checkedGet(s));
        await c.waitFor(1);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        c.send(checkedGet(s));
        const responses = await c.waitFor(2);
        assert.equal(responses[1]!.status, 200);
        assert.equal(responses[1]!.body.toString(), 'ok');
        assert.equal(c.closed, false, 'the idle client connection was kept');
        assert.equal(up.connections(), 1, 'the idle upstream connection was kept and reused');
        c.close();
      },
      // The client connections' sweeper runs every second; the upstream pool's every 100 ms here.
      { PROXY_CONNECT_TIMEOUT_MS: '1000' },
    );
  });

  void it("does not reuse an upstream connection after the upstream's Connection: close", async () => {
    await withRawUpstream(
      (_head, socket) => {
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
      },
      async (s, up) => {
        const c = await RawClient.open(s.proxy.url);
        for (let i = 0; i < 3; i++) {
          c.send(checkedGet(s));
          await c.waitFor(i + 1);
        }
        assert.deepEqual(
          c.responses.map((r) => [r.status, r.body.toString()]),
          [
            [200, 'ok'],
            [200, 'ok'],
            [200, 'ok'],
          ],
        );
        assert.equal(up.connections(), 3);
        c.close();
      },
    );
  });

  void it('a response delimited by the close of the upstream connection is re-chunked', async () => {
    await withRawUpstream(
      (_head, socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart one, ');
        setTimeout(() => socket.end('part two'), 20);
      },
      async (s) => {
        const c = await RawClient.open(s.proxy.url);
        c.send(checkedGet(s));
        const [r] = await c.waitFor(1);
        assert.equal(r!.headers['transfer-encoding'], 'chunked');
        assert.equal(r!.body.toString(), 'part one, part two');
        c.close();
      },
    );
  });

  void it('a response cut short by the upstream cuts the client connection', async () => {
    await withRawUpstream(
      (_head, socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly some');
        setTimeout(() => socket.destroy(), 20);
      },
      async (s) => {
        const c = await RawClient.open(s.proxy.url);
        c.send(checkedGet(s));
        await eventually(() => c.closed, 3000);
        assert.equal(c.responses.length, 0, 'no complete response');
        await eventually(() => s.logLines.some((l) => l.msg === 'proxy request'));
        const line = s.logLines.find((l) => l.msg === 'proxy request') as Record<string, unknown>;
        assert.equal(line.status, 200);
        assert.equal(typeof line.error, 'string');
      },
    );
  });

  void it('ignores 1xx answers and passes 204 and 304 without a body', async () => {
    await withRawUpstream(
      (head, socket) => {
        if (head.startsWith('GET /hints')) {
          socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n');
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody');
        } else if (head.startsWith('GET /none')) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
        else socket.write('HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n');
      },
      async (s) => {
        const c = await RawClient.open(s.proxy.url);
        const h = `Host: p\r\nAuthorization: ${AUTH}\r\nX-PROXYVID: ${s.id}\r\n\r\n`;
        c.send(`GET /hints HTTP/1.1\r\n${h}GET /none HTTP/1.1\r\n${h}GET /same HTTP/1.1\r\n${h}`);
        const r = await c.waitFor(3);
        assert.deepEqual(
          r.map((x) => [x.status, x.body.length]),
          [
            [200, 4],
            [204, 0],
            [304, 0],
          ],
        );
        assert.equal(r[2]!.headers.etag, '"x"');
        assert.equal(r[1]!.headers['transfer-encoding'], undefined);
        c.close();
      },
    );
  });

  void it('long bodies reach slow and concurrent clients intact (read buffers are not reused early)', async () => {
    // The proxy hands body bytes on as views of the buffers it read them into; a buffer must not
    // be read into again while a client has not taken its bytes. Random bytes in random chunk
    // sizes, two clients at once, each reading in bursts with pauses.
    const bodies = [randomBytes(6 * 1024 * 1024), randomBytes(5 * 1024 * 1024 + 17)];
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    let seed = 7;
    const nextSize = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return 1 + (seed % 150_000);
    };
    await withRawUpstream(
      (head, socket) => {
        const body = bodies[head.includes('/b1') ? 1 : 0] as Buffer;
        const chunked = head.includes('/b0');
        socket.write(
          chunked
            ? 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
            : `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`,
        );
        let at = 0;
        const pump = () => {
          while (at < body.length && !socket.destroyed) {
            const piece = body.subarray(at, at + nextSize());
            at += piece.length;
            const ok = chunked
              ? socket.write(
                  Buffer.concat([
                    Buffer.from(`${piece.length.toString(16)}\r\n`),
                    piece,
                    Buffer.from('\r\n'),
                  ]),
                )
              : socket.write(piece);
            if (at >= body.length && chunked) socket.write('0\r\n\r\n');
            if (!ok) {
              socket.once('drain', pump);
              return;
            }
          }
        };
        pump();
      },
      async (s) => {
        const fetchSlowly = async (path: string, pauseMs: number) => {
          const c = await RawClient.open(s.proxy.url);
          let received = 0;
          c.socket.on('data', (d: Buffer) => {
            received += d.length;
            // Long enough for the kernel's socket buffers to fill, so the proxy's writes queue.
            if (received > 2 * 1024 * 1024) {
              received = 0;
              c.socket.pause();
              setTimeout(() => c.socket.resume(), pauseMs);
            }
          });
          c.send(checkedGet(s, path));
          const [res] = await c.waitFor(1, 30_000);
          c.close();
          return res;
        };
        const [r0, r1] = await Promise.all([fetchSlowly('/b0', 200), fetchSlowly('/b1', 150)]);
        assert.equal(r0?.status, 200);
        assert.equal(r1?.status, 200);
        assert.equal(sha(r0?.body ?? Buffer.alloc(0)), sha(bodies[0] as Buffer), 'chunked body differs');
        assert.equal(sha(r1?.body ?? Buffer.alloc(0)), sha(bodies[1] as Buffer), 'body by length differs');
      },
    );
  });

  void it('a client that does not read pauses the upstream (backpressure)', async () => {
    const total = 256 * 1024 * 1024;
    let written = 0;
    await withRawUpstream(
      (_head, socket) => {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${total}\r\n\r\n`);
        const chunk = Buffer.alloc(64 * 1024, 1);
        const pump = () => {
          while (written < total && !socket.destroyed) {
            written += chunk.length;
            if (!socket.write(chunk)) {
              socket.once('drain', pump);
              return;
            }
          }
        };
        pump();
      },
      async (s) => {
        const c = await RawClient.open(s.proxy.url);
        c.socket.pause();
        c.send(checkedGet(s, '/big'));
        await new Promise((r) => setTimeout(r, 700));
        assert.ok(
          written < 64 * 1024 * 1024,
          `the upstream wrote ${written} bytes to a client that reads nothing`,
        );
        c.close();
      },
    );
  });
});

/**
 * An upstream that answers every request with the bytes of its body; requests to a path starting
 * with /hold are answered only once `release` is called.
 */
async function echoUpstream() {
  let releaseHeld = () => {};
  const held = new Promise<void>((resolve) => (releaseHeld = resolve));
  let received = 0;
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      received++;
      const answer = () => res.end(Buffer.concat(parts));
      if (req.url?.startsWith('/hold') === true) void held.then(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    release: releaseHeld,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

void describe('proxy on the wire: request bodies', () => {
  let up: Awaited<ReturnType<typeof echoUpstream>>;
  let s: Stack;
  before(async () => {
    up = await echoUpstream();
    // One upstream connection: a request waits for it while the one before is held.
    s = await startStack({ PROXY_UPSTREAM_CONNECTIONS: '1' }, up.url);
  });
  after(async () => {
    await s.close();
    up.release();
    await up.close();
  });

  const request = (method: string, path: string, body: Buffer | null, chunked = false) => {
    const framing =
      body === null ? '' : chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${body.length}\r\n`;
    const head = `${method} ${path} HTTP/1.1\r\nHost: p\r\nAuthorization: ${AUTH}\r\nX-PROXYVID: ${s.id}\r\n${framing}\r\n`;
    if (body === null) return Buffer.from(head, 'latin1');
    const payload = chunked
      ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
      : body;
    return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
  };

  void it('small bodies reach the upstream intact, whatever else their reads hold and wherever they are cut', async () => {
    // Bodies up to 16 KB found whole in a read are handed on from the read buffer: where a request
    // starts must be known exactly (empty lines between requests, bodies that look like heads).
    // Some bodies look like heads: a read that starts inside one must not be taken for a request.
    const headLike = (n: number) =>
      Buffer.from('GET /x HTTP/1.1\r\nHost: p\r\n\r\n'.repeat(Math.ceil(n / 29)).slice(0, n), 'latin1');
    const bodies: (Buffer | null)[] = [
      null,
      Buffer.from('a\r\n\r\nGET /x HTTP/1.1\r\nHost: p\r\n\r\n', 'latin1'),
      randomBytes(100),
      randomBytes(16 * 1024),
      headLike(16 * 1024 + 1),
      randomBytes(1),
      headLike(3000),
      null,
      randomBytes(50),
    ];
    const parts = bodies.map((body, i) => request(body === null ? 'GET' : 'POST', `/r${i}`, body, i === 6));
    // Empty lines before two of the requests, which llhttp skips.
    parts[2] = Buffer.concat([Buffer.from('\r\n\r\n'), parts[2] as Buffer]);
    parts[3] = Buffer.concat([Buffer.from('\n'), parts[3] as Buffer]);
    const wire = Buffer.concat(parts);
    const startOf = (i: number) => parts.slice(0, i).reduce((n, p) => n + p.length, 0);
    // Where the data of the two bodies the parser delivers itself begins (after the chunk size line
    // for the chunked one): a read starting there starts with a head-like body, not a request.
    const bodyData = [4, 6].map((i) => {
      const part = parts[i] as Buffer;
      const at = part.indexOf('\r\n\r\n') + 4;
      return startOf(i) + (i === 6 ? part.indexOf('\r\n', at) + 2 : at);
    });
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 12; round++) {
      // Round 0 sends it in one write, rounds 1 and 2 cut it where a body's data begins, the others
      // at random places (some at request ends).
      const cuts = new Set<number>(round === 1 || round === 2 ? [bodyData[round - 1] as number] : []);
      for (let k = 0; round > 2 && k < round * 2; k++) cuts.add(1 + random(wire.length - 1));
      for (let k = 0; round > 2 && k < round; k++) cuts.add(startOf(1 + random(parts.length - 1)));
      const at = [0, ...[...cuts].sort((a, b) => a - b), wire.length];
      const c = await RawClient.open(s.proxy.url);
      c.socket.setNoDelay(true);
      for (let k = 0; k + 1 < at.length; k++) {
        c.send(wire.subarray(at[k], at[k + 1]));
        // Each piece its own read at the proxy.
        await new Promise((r) => setTimeout(r, 2));
      }
      const r = await c.waitFor(bodies.length, 5000);
      c.close();
      assert.deepEqual(
        r.map((x) => x.status),
        bodies.map(() => 200),
        `round ${round}`,
      );
      for (const [i, body] of bodies.entries())
        assert.ok(r[i]?.body.equals(body ?? Buffer.alloc(0)), `round ${round}: body ${i} differs`);
    }
  });

  void it('small answers to a client that stops reading queue behind one the kernel could not take, in order', async () => {
    // Small answers go to the socket's handle directly (socket-writer.ts): once the client's
    // buffers are full, one is taken only in part and every later one must queue behind it.
    const count = 700; // 700 × 12 KB: more than loopback's socket buffers hold unread
    const bodies = Array.from({ length: count }, () => randomBytes(12 * 1024));
    const c = await RawClient.open(s.proxy.url);
    c.socket.pause();
    const before = up.received();
    c.send(Buffer.concat(bodies.map((b, i) => request('POST', `/q${i}`, b))));
    await eventually(() => up.received() - before === count, 20000);
    c.socket.resume();
    const r = await c.waitFor(count, 20000);
    c.close();
    assert.equal(r.length, count);
    for (const [i, body] of bodies.entries()) assert.ok(r[i]?.body.equals(body), `answer ${i} differs`);
  });

  void it('a small body waiting for an upstream connection is its own copy, not the shared read buffer', async () => {
    // Client connections read into one buffer: a body taken from it and still waiting when the
    // next read comes must have been copied, or it shows that read's bytes.
    const first = await RawClient.open(s.proxy.url);
    first.send(request('POST', '/hold', randomBytes(10)));
    const before = up.received();
    await eventually(() => up.received() > before);
    const waiting = await RawClient.open(s.proxy.url);
    const body = randomBytes(300);
    waiting.send(request('POST', '/waits', body));
    await new Promise((r) => setTimeout(r, 50));
    const later = await RawClient.open(s.proxy.url);
    const laterBody = randomBytes(3000);
    later.send(request('POST', '/later', laterBody));
    await new Promise((r) => setTimeout(r, 50));
    up.release();
    const [[r1], [r2], [r3]] = await Promise.all([first.waitFor(1), waiting.waitFor(1), later.waitFor(1)]);
    for (const c of [first, waiting, later]) c.close();
    assert.equal(r1?.status, 200);
    assert.ok(r2?.body.equals(body), 'the waiting body changed');
    assert.ok(r3?.body.equals(laterBody));
  });
});
