// Guards what the proxy takes from its HTTP/1 parser, on every backend that runs here: the
// arguments and order of the callbacks, llhttp's strictness, and that the backends agree byte for
// byte. Node's binding (`_http_common`) is no public API: if Node changes or removes it, these fail
// first, and `auto` falls back to the WebAssembly build.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import {
  availableParserBackends,
  isParseError,
  loadParserBackend,
  METHODS,
  REQUEST,
  RESPONSE,
  setBodyCallback,
  setMessageCompleteCallback,
  useParserBackend,
} from './index.js';
import type { ParserBackend } from './parser.js';

interface Head {
  major: number;
  minor: number;
  headers: string[];
  method: string;
  url: string;
  status: number | undefined;
  reason: string | undefined;
  upgrade: boolean;
  keepAlive: boolean;
}

/** Parses `input` (one or more pieces) and reports what each callback saw. */
function parse(backend: ParserBackend, type: 1 | 2, ...pieces: string[]) {
  const heads: Head[] = [];
  const bodies: Buffer[] = [];
  let complete = 0;
  const parser = backend.create(type, {
    onHeadersComplete: (
      major: number,
      minor: number,
      headers: string[],
      method: number,
      url: string,
      status: number,
      reason: string,
      upgrade: boolean,
      keepAlive: boolean,
    ) => {
      heads.push({
        major,
        minor,
        headers,
        method: METHODS[method] ?? '',
        url,
        status,
        reason,
        upgrade,
        keepAlive,
      });
      return 0;
    },
    onBody: (chunk: Buffer) => void bodies.push(chunk),
    onMessageComplete: () => void complete++,
  });
  let result: unknown = 0;
  for (const piece of pieces) {
    result = parser.execute(Buffer.from(piece, 'latin1'));
    if (isParseError(result)) break;
  }
  parser.close();
  return { heads, body: Buffer.concat(bodies).toString('latin1'), bodies, complete, result };
}

void describe('parser backends', () => {
  void it('auto picks the built-in binding where this Node.js has one, and wasm runs everywhere', () => {
    const builtin = loadParserBackend('builtin');
    const hasInternal = typeof createRequire(import.meta.url)('_http_common').HTTPParser === 'function';
    assert.equal(builtin !== null, hasInternal);
    assert.equal(useParserBackend('auto').name, hasInternal ? 'builtin' : 'wasm');
    assert.equal(useParserBackend('wasm').name, 'wasm');
    assert.deepEqual(
      availableParserBackends().map((b) => b.name),
      hasInternal ? ['builtin', 'wasm'] : ['wasm'],
    );
    useParserBackend('auto');
  });

  void it("names methods by llhttp's number as node's list does where that list is by number", () => {
    const common = createRequire(import.meta.url)('_http_common') as { methods?: string[] };
    if (common.methods !== undefined) assert.deepEqual(METHODS.slice(0, 34), common.methods.slice(0, 34));
    assert.equal(METHODS[1], 'GET');
    assert.equal(METHODS[46], 'QUERY');
  });
});

for (const backend of availableParserBackends()) {
  void describe(`parser backend ${backend.name}`, () => {
    void it('reports a request head with its arguments in the order the proxy reads them', () => {
      const r = parse(backend, REQUEST, 'POST /a?b=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello');
      assert.equal(r.complete, 1);
      assert.deepEqual(r.heads[0], {
        major: 1,
        minor: 1,
        headers: ['Host', 'h', 'Content-Length', '5'],
        method: 'POST',
        url: '/a?b=1',
        status: undefined,
        reason: undefined,
        upgrade: false,
        keepAlive: true,
      });
      assert.equal(r.body, 'hello');
      // Body chunks are copies: the proxy may keep them after the read buffer is reused.
      assert.ok(r.bodies.every((b) => Buffer.isBuffer(b)));
    });

    void it('reports a response head and a chunked body split across reads', () => {
      const r = parse(
        backend,
        RESPONSE,
        'HTTP/1.1 201 Made\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nab',
        'c\r\n0\r\n\r\n',
      );
      assert.equal(r.complete, 1);
      assert.equal(r.heads[0]?.status, 201);
      assert.equal(r.heads[0]?.reason, 'Made');
      assert.equal(r.heads[0]?.keepAlive, false);
      assert.equal(r.body, 'abc');
    });

    void it('refuses smuggling-shaped framing strictly, as node:http does', () => {
      const both = parse(
        backend,
        REQUEST,
        'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      );
      assert.ok(isParseError(both.result));
      const twice = parse(
        backend,
        REQUEST,
        'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      );
      assert.ok(isParseError(twice.result));
      const bareLf = parse(backend, REQUEST, 'GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n');
      assert.ok(isParseError(bareLf.result));
      assert.equal(typeof (bareLf.result as { code?: unknown }).code, 'string');
    });

    void it('finish() completes a response delimited by the close of the connection', () => {
      let complete = 0;
      const parser = backend.create(RESPONSE, {
        onHeadersComplete: () => 0,
        onBody: () => {},
        onMessageComplete: () => void complete++,
      });
      parser.execute(Buffer.from('HTTP/1.1 200 OK\r\n\r\nuntil the end'));
      assert.equal(complete, 0);
      assert.equal(parser.finish(), undefined);
      assert.equal(complete, 1);
      parser.close();
    });

    void it('without a message-complete callback reads on to the next request, and takes one back', () => {
      // The client side clears the callback while requests come without bodies (they end with their
      // head) and sets it again for a request with one.
      const heads: string[] = [];
      let complete = 0;
      const parser = backend.create(REQUEST, {
        onHeadersComplete: (_a: number, _b: number, _h: string[], _m: number, url: string) => {
          heads.push(url);
          return 0;
        },
        onBody: () => undefined,
        onMessageComplete: () => void complete++,
      });
      setMessageCompleteCallback(parser, null);
      const two = 'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n';
      assert.equal(parser.execute(Buffer.from(two)), two.length);
      assert.deepEqual(heads, ['/a', '/b']);
      assert.equal(complete, 0);
      setMessageCompleteCallback(parser, () => void complete++);
      const post = 'POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi';
      assert.equal(parser.execute(Buffer.from(post)), post.length);
      assert.deepEqual(heads, ['/a', '/b', '/c']);
      assert.equal(complete, 1);
      parser.close();
    });

    void it('without a body callback still checks and completes a body, and takes one back per message', () => {
      // The upstream side clears the callback for bodies it hands on from the read buffer (no copy,
      // no call into JavaScript per chunk) and sets it again for framings it leaves to llhttp.
      const bodies: string[] = [];
      let complete = 0;
      const parser = backend.create(RESPONSE, {
        onHeadersComplete: () => 0,
        onBody: (chunk: Buffer) => void bodies.push(chunk.toString()),
        onMessageComplete: () => void complete++,
      });
      setBodyCallback(parser, null);
      const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
      // A head executed alone ends there; the body follows in later calls.
      assert.equal(parser.execute(Buffer.from(head)), head.length);
      assert.equal(parser.execute(Buffer.from('3\r\nabc\r\n0\r\n\r\n')), 13);
      assert.equal(complete, 1);
      assert.equal(bodies.length, 0);
      // Broken chunk framing is still refused without a callback.
      const bad = parser.execute(Buffer.from(`${head}3\r\nabcX\r\n`));
      assert.ok(isParseError(bad));
      parser.close();
      const again = backend.create(RESPONSE, {
        onHeadersComplete: () => 0,
        onBody: (chunk: Buffer) => void bodies.push(chunk.toString()),
        onMessageComplete: () => void complete++,
      });
      setBodyCallback(again, null);
      again.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno'));
      setBodyCallback(again, (chunk: Buffer) => void bodies.push(`+${chunk.toString()}`));
      again.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes'));
      assert.equal(complete, 3);
      assert.deepEqual(bodies, ['+yes']);
      again.close();
    });

    void it('ends a request head only at CRLFCRLF and skips empty lines before a request', () => {
      // What the client side's body locating rests on (connection.ts, locateBody).
      const post = (path: string) => `POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyz`;
      for (const bad of [
        'POST /a HTTP/1.1\r\nHost: a\nContent-Length: 3\r\n\r\nxyz',
        'POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\nxyz',
        'POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 3\n\r\nxyz',
        'POST /d HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\r\nxyz',
        'POST /e HTTP/1.1\r\nHost: a\r\n Content-Length: 3\r\n\r\nxyz',
        'POST /f HTTP/1.1\nHost: a\r\nContent-Length: 3\r\n\r\nxyz',
        'POST /g HTTP/1.1\r\nHost: a\r\nX: 1\rb\r\nContent-Length: 3\r\n\r\nxyz',
      ]) {
        const r = parse(backend, REQUEST, bad);
        assert.ok(isParseError(r.result), JSON.stringify(bad));
        assert.equal(r.heads.length, 0, JSON.stringify(bad));
      }
      // Empty lines (CRLF, or a bare LF) before a request are skipped, not refused.
      const r = parse(
        backend,
        REQUEST,
        `GET /1 HTTP/1.1\r\nHost: a\r\n\r\n\r\n\r\n${post('/2')}\n${post('/3')}`,
      );
      assert.ok(!isParseError(r.result));
      assert.deepEqual(
        r.heads.map((h) => h.url),
        ['/1', '/2', '/3'],
      );
      assert.equal(r.body, 'xyzxyz');
    });
  });
}
