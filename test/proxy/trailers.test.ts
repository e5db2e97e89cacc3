// Trailers end the message they follow. The parser hands them over like headers (Node's binding
// through the same callback as a long head's first headers), so they must not be taken for the
// start of the next message's head, on either side of the proxy or on either parser backend.
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { AUTH, eventually, startStack, type Stack } from './stack.js';

/** A raw upstream: `answer` gets each request head (and each chunked body's last lines). */
async function rawUpstream(answer: (head: string, socket: Socket) => void): Promise<Server> {
  const server = createServer((socket) => {
    let pending = '';
    socket.on('data', (data: Buffer) => {
      pending += data.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
        answer(pending.slice(0, end), socket);
        pending = pending.slice(end + 4);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Sends `wire` to the proxy on one connection and returns what came back once `done` says so. */
async function exchange(s: Stack, wire: string, done: (text: string) => boolean): Promise<string> {
  const { hostname, port } = new URL(s.proxy.url);
  const socket = connect({ host: hostname, port: Number(port) });
  let text = '';
  socket.on('data', (d: Buffer) => void (text += d.toString('latin1')));
  socket.on('error', () => undefined);
  socket.write(wire);
  try {
    await eventually(() => done(text), 5000);
  } finally {
    socket.destroy();
  }
  return text;
}

const checks = (s: Stack) => `Host: p\r\nAuthorization: ${AUTH}\r\nX-ProxyVID: ${s.id}\r\n`;
const count = (text: string, what: string) => text.split(what).length - 1;

void describe('proxy on the wire: trailers', () => {
  void it("a request's trailers do not become the next request's target or headers", async () => {
    const heads: string[] = [];
    const up = await rawUpstream((head, socket) => {
      // A request head, or the end of the chunked body the proxy sends on: either gets its answer
      // once whole.
      if (head.startsWith('GET ')) heads.push(head);
      if (head.startsWith('POST ')) return void heads.push(head);
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const s = await startStack({}, `http://127.0.0.1:${(up.address() as AddressInfo).port}`);
    try {
      const wire =
        `POST /first HTTP/1.1\r\n${checks(s)}Transfer-Encoding: chunked\r\n\r\n` +
        `3\r\nabc\r\n0\r\nX-Trailer: from-first\r\n\r\n` +
        `GET /second HTTP/1.1\r\n${checks(s)}\r\n`;
      const text = await exchange(s, wire, (t) => count(t, 'HTTP/1.1 200') >= 2);
      assert.equal(count(text, 'HTTP/1.1 200'), 2, text);
      const second = heads.find((h) => h.startsWith('GET '));
      assert.ok(second?.startsWith('GET /second HTTP/1.1\r\n'), second);
      assert.ok(!/x-trailer/i.test(second ?? ''), second);
    } finally {
      await s.close();
      up.close();
    }
  });

  void it("a response's trailers do not reach the next response on the pooled connection", async () => {
    let n = 0;
    const up = await rawUpstream((_head, socket) => {
      socket.write(
        n++ === 0
          ? 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-Trailer: for-the-first\r\n\r\n'
          : 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Second: 1\r\n\r\nok',
      );
    });
    const s = await startStack(
      { PROXY_UPSTREAM_CONNECTIONS: '1' },
      `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
    );
    try {
      const first = await exchange(s, `GET /a HTTP/1.1\r\n${checks(s)}\r\n`, (t) => t.endsWith('0\r\n\r\n'));
      assert.match(first, /^HTTP\/1\.1 200/);
      const second = await exchange(s, `GET /b HTTP/1.1\r\n${checks(s)}\r\n`, (t) => t.endsWith('ok'));
      assert.equal(n, 2);
      assert.match(second, /\r\nX-Second: 1\r\n/i);
      assert.ok(!/x-trailer/i.test(second), second);
    } finally {
      await s.close();
      up.close();
    }
  });
});
