// One exchange driven through its phases by hand: a fake client connection, a fake pool and fake
// upstream connections record what the exchange writes, asks for and gives back.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { AccessLogEntry } from './access-log.js';
import { ConnectionMemo, type ClientSide, type ConnectionExchange } from './client-side.js';
import { Exchange, type ForwardContext } from './forward.js';
import { scanRequestHeaders } from './headers.js';
import { invalidProxyId } from './problems.js';
import type { UpstreamLink, UpstreamUser } from './upstream-user.js';

class FakeClient implements ClientSide {
  readonly memo = new ConnectionMemo();
  written = '';
  /** What `write` answers: false plays a client socket whose buffer is full. */
  takesWrites = true;
  holdsWrites = false;
  paused = 0;
  destroyed = false;
  finished: ConnectionExchange[] = [];
  write(data: string | Buffer): boolean {
    this.written += typeof data === 'string' ? data : data.toString('latin1');
    return this.takesWrites;
  }
  writeAll(parts: (string | Buffer)[]): boolean {
    for (const p of parts) this.write(p);
    return this.takesWrites;
  }
  afterWrites(done: () => void): void {
    done();
  }
  pauseReading(reason: number): void {
    this.paused |= reason;
  }
  resumeReading(reasons: number): void {
    this.paused &= ~reasons;
  }
  destroy(): void {
    this.destroyed = true;
  }
  exchangeDone(ex: ConnectionExchange): void {
    this.finished.push(ex);
  }
}

class FakeLink implements UpstreamLink {
  readonly socket = { cork() {}, uncork() {} } as unknown as Socket;
  written = '';
  sentCount = 0;
  paused = false;
  released: [boolean, number] | null = null;
  destroyed = false;
  write(data: string | Buffer): boolean {
    this.written += typeof data === 'string' ? data : data.toString('latin1');
    return true;
  }
  sent(): void {
    this.sentCount++;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  release(reusable: boolean, keepAliveMs: number): void {
    this.released = [reusable, keepAliveMs];
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/** A pool that hands out a connection only when the test says so. */
class FakePool {
  waiting: UpstreamUser[] = [];
  cancelled: UpstreamUser[] = [];
  acquire(user: UpstreamUser): void {
    this.waiting.push(user);
  }
  cancel(user: UpstreamUser): void {
    this.cancelled.push(user);
  }
  /** Gives the first waiting user a fresh connection. */
  give(): FakeLink {
    const link = new FakeLink();
    const user = this.waiting.shift();
    assert.ok(user !== undefined, 'nobody waits for a connection');
    user.onUpstream(link);
    return link;
  }
}

function setup(method: string, url: string, headers: string[], options: { http10?: boolean } = {}) {
  const pool = new FakePool();
  const client = new FakeClient();
  const log: AccessLogEntry[] = [];
  const samples: { status: number }[] = [];
  const ctx: ForwardContext = {
    pool,
    basePath: '/base',
    upstreamHost: 'upstream.test:9090',
    timeoutMs: 1000,
    bodyLimitBytes: 100,
    keepAliveSeconds: 65,
    metrics: { record: (s) => void samples.push(s) },
    accessLog: { write: (e) => void log.push(e) },
    closing: () => false,
  };
  const scan = scanRequestHeaders(['Host', 'proxy.test', 'X-PROXYVID', 'pv_x', 'X-A', 'b', ...headers]);
  const ex = new Exchange(ctx, client, method, url, scan, 'req-1', options.http10 ?? false, true);
  ex.begin();
  return { ex, pool, client, log, samples };
}

/** A GET without a body, admitted and given an upstream connection. */
function forwardedGet(url: string, options: { http10?: boolean } = {}) {
  const parts = setup('GET', url, [], options);
  parts.ex.onRequestEnd();
  parts.ex.forward();
  return { ...parts, link: parts.pool.give() };
}

void describe('Exchange', () => {
  void it('forwards a GET and relays the answer, then gives the connection back for reuse', () => {
    const { ex, pool, client, log, samples } = setup('GET', '/v4/echoes?a=1', []);
    ex.onRequestEnd();
    assert.equal(ex.phase, 'checking');
    ex.forward();
    assert.equal(ex.phase, 'awaitingUpstream');
    const link = pool.give();
    assert.equal(ex.phase, 'requesting');
    assert.equal(
      link.written,
      'GET /base/v4/echoes?a=1 HTTP/1.1\r\nHost: upstream.test:9090\r\nX-A: b\r\nConnection: keep-alive\r\n\r\n',
    );
    assert.equal(link.sentCount, 1);
    ex.onResponseHead(200, 'OK', ['Content-Length', '2', 'Keep-Alive', 'timeout=10'], true);
    assert.equal(ex.phase, 'responding');
    ex.onResponseBody(Buffer.from('ok'));
    ex.onResponseEnd();
    assert.equal(ex.phase, 'done');
    assert.match(client.written, /^HTTP\/1\.1 200 OK\r\nContent-Length: 2\r\n/);
    assert.match(client.written, /X-Request-Id: req-1\r\n/);
    assert.ok(client.written.endsWith('\r\n\r\nok'));
    // Reused, idle for the upstream's announced 10 s (less the margin, which the connection applies).
    assert.deepEqual(link.released, [true, 10_000]);
    assert.deepEqual(client.finished, [ex]);
    assert.equal(log.length, 1);
    assert.equal(log[0]?.status, 200);
    assert.equal(log[0]?.path, '/v4/echoes?a');
    assert.equal(samples.length, 1);
  });

  void it('re-frames a chunked answer as one chunk per upstream read for an HTTP/1.1 client', () => {
    const { ex, client } = forwardedGet('/s');
    ex.onResponseHead(200, 'OK', ['Transfer-Encoding', 'chunked'], true);
    ex.onResponseBody(Buffer.from('abc'));
    ex.onResponseBody(Buffer.from('de'));
    assert.equal(ex.onUpstreamFlush(), false);
    ex.onResponseBody(Buffer.from('f'));
    ex.onResponseEnd();
    assert.match(client.written, /Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n1\r\nf\r\n0\r\n\r\n$/);
  });

  void it('an HTTP/1.0 client gets a body without length up to the close of its connection', () => {
    const { ex, client } = forwardedGet('/s', { http10: true });
    ex.onResponseHead(200, 'OK', [], false);
    ex.onResponseBody(Buffer.from('xyz'));
    ex.onResponseEnd();
    assert.equal(ex.closeAfter, true);
    assert.doesNotMatch(client.written, /Transfer-Encoding/);
    assert.ok(client.written.endsWith('\r\n\r\nxyz'));
  });

  void it('collects a small body and sends it with the head in one write', () => {
    const { ex, pool } = setup('POST', '/up', ['Content-Length', '5']);
    ex.forward();
    assert.equal(ex.phase, 'collecting');
    assert.equal(pool.waiting.length, 0);
    ex.onRequestWhole(Buffer.from('hello'));
    assert.equal(ex.phase, 'awaitingUpstream');
    const link = pool.give();
    assert.ok(link.written.startsWith('POST /base/up HTTP/1.1\r\n'));
    assert.ok(link.written.endsWith('Content-Length: 5\r\nConnection: keep-alive\r\n\r\nhello'));
    assert.equal(link.sentCount, 1);
  });

  void it('streams a chunked body to the upstream as chunks, and ends it with the last chunk', () => {
    const { ex, pool } = setup('POST', '/up', ['Transfer-Encoding', 'chunked']);
    ex.onRequestBody(Buffer.from('held'));
    ex.forward();
    const link = pool.give();
    assert.match(link.written, /Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n4\r\nheld\r\n$/);
    ex.onRequestBody(Buffer.from('more!'));
    ex.onRequestEnd();
    assert.ok(link.written.endsWith('5\r\nmore!\r\n0\r\n\r\n'));
    assert.equal(link.sentCount, 1);
  });

  void it('a refused request gets the problem, counts no body, and is logged once', () => {
    const { ex, pool, client, log } = setup('POST', '/up', ['Content-Length', '10']);
    ex.onRequestBody(Buffer.from('0123456789'));
    ex.reject(invalidProxyId('X-PROXYVID'), false);
    assert.equal(ex.phase, 'done');
    assert.equal(pool.waiting.length, 0);
    assert.match(client.written, /^HTTP\/1\.1 400 /);
    assert.match(client.written, /"traceId":"req-1"/);
    assert.equal(log[0]?.bytesIn, 0);
    assert.equal(log[0]?.error, 'Invalid X-PROXYVID Header');
    // A late answer for it changes nothing.
    ex.onResponseHead(200, 'OK', [], true);
    ex.abort();
    assert.equal(log.length, 1);
  });

  void it('a chunked body past the limit is refused with 413 and the connection closes', () => {
    const { ex, pool, client } = setup('POST', '/up', ['Transfer-Encoding', 'chunked']);
    ex.forward();
    const link = pool.give();
    ex.onRequestBody(Buffer.alloc(101));
    assert.equal(link.destroyed, true);
    assert.match(client.written, /^HTTP\/1\.1 413 /);
    assert.equal(ex.closeAfter, true);
  });

  void it('a client gone while waiting for a connection withdraws from the pool and is logged 499', () => {
    const { ex, pool, log } = setup('GET', '/x', []);
    ex.onRequestEnd();
    ex.forward();
    ex.abort();
    assert.deepEqual(pool.cancelled, [ex]);
    assert.equal(log[0]?.status, 499);
    assert.equal(log[0]?.error, 'client closed');
  });

  void it('sends an idempotent request once more when a reused connection was closed before answering', () => {
    const { ex, pool, client, link: first } = forwardedGet('/again');
    ex.onUpstreamError('ECONNRESET', false, true);
    assert.equal(ex.phase, 'awaitingUpstream');
    const second = pool.give();
    assert.equal(second.written, first.written);
    // Only once: a second failure is the client's 502.
    ex.onUpstreamError('ECONNRESET', false, true);
    assert.match(client.written, /^HTTP\/1\.1 502 /);
  });

  void it('an upstream failing mid-body cuts the client connection instead of answering', () => {
    const { ex, client, log } = forwardedGet('/x');
    ex.onResponseHead(200, 'OK', ['Content-Length', '10'], true);
    ex.onResponseBody(Buffer.from('half'));
    ex.onUpstreamFlush();
    ex.onUpstreamError('UPSTREAM_CLOSED', false, false);
    assert.equal(client.destroyed, true);
    assert.equal(log[0]?.status, 200);
    assert.equal(log[0]?.error, 'UPSTREAM_CLOSED');
  });

  void it('a slow client pauses the upstream until its socket drains', () => {
    const { ex, client, link } = forwardedGet('/x');
    ex.onResponseHead(200, 'OK', ['Content-Length', '100'], true);
    client.takesWrites = false;
    ex.onResponseBody(Buffer.alloc(50));
    ex.onUpstreamFlush();
    assert.equal(link.paused, true);
    ex.onClientDrain();
    assert.equal(link.paused, false);
  });
});
