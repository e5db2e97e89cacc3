// Body bytes leave an upstream connection as views of the buffers they were read into: a buffer
// must not be read into again while the client still holds bytes of it (the exchange says so from
// onUpstreamFlush), and bytes in the shared read buffer are marked as such.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { inSharedReadBuffer } from './read-buffers.js';
import { UpstreamPool } from './upstream-pool.js';
import type { UpstreamLink, UpstreamUser } from './upstream-user.js';
import type { ProxyHttpParser } from '../config.js';
import { useParserBackend } from './parser/index.js';

// The test list runs the proxy suites once per parser backend (scripts/test.mjs).
useParserBackend((process.env.PROXY_HTTP_PARSER ?? 'auto') as ProxyHttpParser);

const BODY = randomBytes(3 * 1024 * 1024 + 5);

/** Answers every request with BODY, chunked in pieces of varied size. */
function startUpstream(): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('data', () => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      let at = 0;
      let size = 1000;
      while (at < BODY.length) {
        const piece = BODY.subarray(at, at + size);
        at += piece.length;
        size = (size * 7) % 200_000 || 1;
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
      }
      socket.write('0\r\n\r\n');
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Fetches BODY through a pool, keeping the chunks as handed over, held by the "client" or not. */
function fetch(
  pool: UpstreamPool,
  holding: boolean,
): Promise<{ kept: Buffer[]; own: Set<ArrayBufferLike>; sent: number }> {
  return new Promise((resolve, reject) => {
    const kept: Buffer[] = [];
    /** The buffers of the connection's own that body bytes were handed over in. */
    const own = new Set<ArrayBufferLike>();
    let sent = 0;
    let conn: UpstreamLink | null = null;
    const user: UpstreamUser = {
      headRequest: false,
      onUpstream(c) {
        conn = c;
        c.write('GET / HTTP/1.1\r\nHost: u\r\n\r\n');
        c.sent();
      },
      onResponseHead() {},
      // Shared-buffer bytes are valid only until the flush: kept as copies, as the exchange does.
      onResponseBody(chunk) {
        if (inSharedReadBuffer(chunk)) kept.push(Buffer.from(chunk));
        else {
          own.add(chunk.buffer);
          kept.push(chunk);
        }
      },
      onResponseEnd() {
        conn?.release(true, -1);
        resolve({ kept, own, sent });
      },
      onUpstreamFlush: () => holding,
      // The "client" sent what it held: the views kept so far may be read into again, so they
      // are copied now (had a buffer been read into too early, the copies show it).
      whenClientSent(done) {
        sent++;
        for (let i = 0; i < kept.length; i++) kept[i] = Buffer.from(kept[i] as Buffer);
        setImmediate(done);
      },
      onUpstreamDrain() {},
      onUpstreamError: (code) => reject(new Error(code)),
    };
    pool.acquire(user);
  });
}

void describe('upstream connection read buffers', () => {
  let server: Server;
  let pool: UpstreamPool;
  before(async () => {
    server = await startUpstream();
    const { port } = server.address() as AddressInfo;
    pool = new UpstreamPool({
      url: new URL(`http://127.0.0.1:${port}`),
      connections: 1,
      connectTimeoutMs: 5000,
      timeoutMs: 5000,
    });
  });
  after(async () => {
    await pool.destroy();
    server.close();
  });

  void it('never reads into a buffer whose bytes the client still holds', async () => {
    // Every chunk is kept as a view until the end: if a held buffer were read into again, the
    // earlier views would show later bytes.
    const { kept, own, sent } = await fetch(pool, true);
    assert.ok(kept.length > 12, `${kept.length} chunks`);
    assert.ok(Buffer.concat(kept).equals(BODY));
    assert.ok(own.size > 1, 'a long body is read into buffers of its own');
    // Reading waited for the client whenever two buffers were held: memory stays bounded.
    assert.ok(sent > 1, `waited for the client ${sent} times`);
    assert.ok(own.size <= 4, `${own.size} buffers for one body`);
  });

  void it('reads into the same buffer again once the client has taken its bytes', async () => {
    const { kept, own } = await fetch(pool, false);
    assert.equal(
      kept.reduce((n, c) => n + c.length, 0),
      BODY.length,
    );
    // Memory stays flat: one buffer of the connection's own for the whole body, not one per read.
    assert.equal(own.size, 1);
    // And a body the client holds still arrives intact on the reused connection.
    const again = await fetch(pool, true);
    assert.ok(Buffer.concat(again.kept).equals(BODY));
  });
});

/** One exchange against an upstream that answers every request with `wire` in one write. */
async function exchangeWith(
  wire: string,
): Promise<{ body: string; ended: boolean; error: string; connections: number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.on('data', () => socket.write(wire, 'latin1'));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const pool = new UpstreamPool({
    url: new URL(`http://127.0.0.1:${port}`),
    connections: 1,
    connectTimeoutMs: 5000,
    timeoutMs: 5000,
  });
  const run = () =>
    new Promise<{ body: string; ended: boolean; error: string }>((resolve) => {
      let body = '';
      let conn: UpstreamLink | null = null;
      pool.acquire({
        headRequest: false,
        onUpstream(c) {
          conn = c;
          c.write('GET / HTTP/1.1\r\nHost: u\r\n\r\n');
          c.sent();
        },
        onResponseHead() {},
        onResponseBody: (chunk) => void (body += chunk.toString('latin1')),
        onResponseEnd() {
          conn?.release(true, -1);
          resolve({ body, ended: true, error: '' });
        },
        onUpstreamFlush: () => false,
        whenClientSent: (done) => done(),
        onUpstreamDrain() {},
        onUpstreamError: (code) => resolve({ body, ended: false, error: code }),
      });
    });
  const first = await run();
  // A second exchange: it gets a new connection if the first one was closed.
  await run();
  await pool.destroy();
  server.close();
  return { ...first, connections };
}

void describe('upstream answers read in one piece', () => {
  void it('a 1xx answer and the final one in one read: the body is found after the second head', async () => {
    const r = await exchangeWith(
      'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n',
    );
    assert.deepEqual([r.body, r.ended, r.connections], ['body', true, 1]);
  });

  void it('bytes after a complete answer: the answer is delivered, the connection is not reused', async () => {
    const r = await exchangeWith(
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx',
    );
    assert.deepEqual([r.body, r.ended], ['ok', true]);
    assert.equal(r.connections, 2);
    const garbage = await exchangeWith('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\u0000garbage');
    assert.deepEqual([garbage.body, garbage.ended, garbage.connections], ['ok', true, 2]);
    // The same after a located (chunked) body, whose end is reported after llhttp's call.
    const located = await exchangeWith(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx',
    );
    assert.deepEqual([located.body, located.ended, located.connections], ['ok', true, 2]);
    const partial = await exchangeWith(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nHTTP/1.',
    );
    assert.deepEqual([partial.body, partial.ended, partial.connections], ['ok', true, 2]);
  });

  void it('a malformed chunked body fails the exchange without handing on what follows the error', async () => {
    const r = await exchangeWith(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbodyX\r\n0\r\n\r\n',
    );
    assert.equal(r.ended, false);
    assert.match(r.error, /^HPE_/);
    assert.equal(r.body, '');
  });
});
