// The two parser backends must read every input alike: the same heads, bodies and trailers, the
// same refusals with the same llhttp codes at the same byte, however the input is split into reads.
// What is refused on one side and accepted on the other is how a proxy and its upstream come to
// disagree about framing.
import assert from 'node:assert/strict';
import { maxHeaderSize } from 'node:http';
import { describe, it } from 'node:test';
import { availableParserBackends, isParseError, REQUEST, RESPONSE } from './index.js';
import type { ParserBackend, ParserType } from './parser.js';

/**
 * Everything a backend reports for `wire` read in pieces cut at `cuts`. Headers that come ahead of
 * their head (Node's binding hands them over in groups of 31) are joined to it, as the proxy does.
 */
function transcript(backend: ParserBackend, type: ParserType, wire: string, cuts: number[]): string[] {
  const out: string[] = [];
  let early: string[] = [];
  let earlyUrl = '';
  const parser = backend.create(type, {
    onHeaders: (headers: string[], url: string) => {
      early = early.concat(headers);
      earlyUrl += url;
    },
    onHeadersComplete: (...args: unknown[]) => {
      const headers = early.concat((args[2] as string[] | undefined) ?? []);
      const url = type === REQUEST ? earlyUrl + ((args[4] as string | undefined) ?? '') : args[4];
      out.push(`head ${JSON.stringify([...args.slice(0, 2), headers, args[3], url, ...args.slice(5)])}`);
      early = [];
      earlyUrl = '';
      // A response to HEAD in the corpus says so with this status.
      return args[5] === 299 ? 1 : 0;
    },
    onBody: (chunk: Buffer) => void out.push(`body ${chunk.toString('latin1')}`),
    onMessageComplete: () => {
      if (early.length > 0) out.push(`trailers ${JSON.stringify(early)}`);
      early = [];
      earlyUrl = '';
      out.push('complete');
    },
  });
  const bytes = Buffer.from(wire, 'latin1');
  let from = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length]) {
    const r = parser.execute(bytes.subarray(from, cut));
    if (isParseError(r)) {
      out.push(`error ${r.code} ${r.reason ?? ''} at ${from + (r.bytesParsed ?? -1)}`);
      parser.close();
      return out;
    }
    out.push(`read ${r}`);
    if (r !== cut - from) break;
    from = cut;
  }
  const end = parser.finish();
  out.push(end === undefined ? 'finish' : `finish error ${end.code}`);
  parser.close();
  return out;
}

const big = 'x'.repeat(maxHeaderSize);
const REQUESTS = [
  'GET /a?b=1 HTTP/1.1\r\nHost: h\r\nX-Blank: \r\nX-Trail: v \t\r\n\r\n',
  'POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /n HTTP/1.0\r\n\r\n',
  'POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n',
  'DELETE / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
  'QUERY /q HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n',
  'GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw bytes',
  'CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\nraw',
  `GET /${'p'.repeat(40)} HTTP/1.1\r\n${Array.from({ length: 40 }, (_, i) => `H${i}: ${i}\r\n`).join('')}\r\n`,
  // Refused: ambiguous framing, bad characters, oversized heads.
  'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
  'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n',
  'GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: h\r\n X: y\r\n\r\n',
  'GET / HTTP/1.1\r\nHo st: h\r\n\r\n',
  'GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n',
  'GET /\x7f HTTP/1.1\r\nHost: h\r\n\r\n',
  'GET / HTTP/2.0\r\nHost: h\r\n\r\n',
  'get / HTTP/1.1\r\nHost: h\r\n\r\n',
  `GET / HTTP/1.1\r\nHost: h\r\nX-Big: ${big}\r\n\r\n`,
  `GET /${big} HTTP/1.1\r\n\r\n`,
];
const RESPONSES = [
  'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 204 No Content\r\n\r\n',
  'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Made\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nT: 1\r\n\r\n',
  'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end',
  'HTTP/1.1 299 Head\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx',
  'HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n',
  'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nframes',
  'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab',
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab',
  'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nbody until close',
  'HTTP/1.1 2000 OK\r\n\r\n',
  'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy',
  'HTTP/1.1 200 OK\rX: y\r\n\r\n',
  `HTTP/1.1 200 OK\r\nX-Big: ${big}\r\n\r\n`,
];

const backends = availableParserBackends();

/** Cuts: none, every byte of the first 80, and three spread over the rest. */
function splits(length: number): number[][] {
  const out: number[][] = [[]];
  for (let i = 1; i < Math.min(length, 80); i++) out.push([i]);
  out.push([Math.floor(length / 3), Math.floor((2 * length) / 3), length - 1]);
  return out;
}

void describe('parser backends agree', () => {
  void it('runs more than one backend where this Node.js has its binding', () => {
    assert.ok(backends.some((b) => b.name === 'wasm'));
  });

  for (const [type, corpus] of [
    [REQUEST, REQUESTS],
    [RESPONSE, RESPONSES],
  ] as const) {
    void it(`on ${corpus.length} ${type === REQUEST ? 'requests' : 'responses'}, whatever the reads`, () => {
      const [reference, ...others] = backends;
      assert.ok(reference !== undefined);
      for (const wire of corpus) {
        for (const cuts of splits(wire.length)) {
          const expected = transcript(reference, type, wire, cuts);
          for (const other of others)
            assert.deepEqual(
              transcript(other, type, wire, cuts),
              expected,
              `${JSON.stringify(wire.slice(0, 80))} cut at ${cuts.join(',')}`,
            );
        }
      }
    });
  }

  void it('refuses a head over the limit with 16 KiB of node:http, as HPE_HEADER_OVERFLOW', () => {
    for (const backend of backends) {
      const t = transcript(backend, REQUEST, REQUESTS.at(-2) as string, []);
      assert.match(t.at(-1) ?? '', /^error HPE_HEADER_OVERFLOW Header overflow at \d+$/, backend.name);
    }
  });
});
