// The body locator must find exactly the bytes llhttp delivers as the body, and end the message
// where llhttp does, however the response is split into reads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BodyLocator,
  BY_LENGTH,
  CHUNKED,
  CONTINUES,
  locatableFraming,
  locateRequestBody,
  UNTIL_CLOSE,
  type Framing,
} from './body-locator.js';
import { availableParserBackends, isParseError, REQUEST, RESPONSE } from './parser/index.js';
import type { ParserBackend } from './parser/parser.js';

const backends = availableParserBackends();

/** What `parse` makes of a wire with each parser backend: the same with all of them. */
function onEveryBackend<T>(parse: (backend: ParserBackend) => T): T {
  const [first, ...others] = backends.map(parse);
  assert.ok(first !== undefined && backends.some((b) => b.name === 'wasm'));
  for (const other of others) assert.deepEqual(other, first);
  return first;
}

/** What llhttp makes of `wire` (one response): its body and whether it completed. */
function llhttpBody(wire: Buffer): { body: Buffer; complete: boolean } {
  return onEveryBackend((backend) => {
    const bodies: Buffer[] = [];
    let complete = false;
    const parser = backend.create(RESPONSE, {
      onHeadersComplete: () => 0,
      onBody: (chunk: Buffer) => void bodies.push(chunk),
      onMessageComplete: () => void (complete = true),
    });
    const r = parser.execute(wire);
    parser.close();
    assert.ok(!isParseError(r), `${backend.name}: ${String(r)}`);
    return { body: Buffer.concat(bodies), complete };
  });
}

/** What the locator makes of `wire` read in pieces cut at `cuts`. */
function located(wire: Buffer, framing: Framing, length: number, cuts: number[]) {
  const loc = new BodyLocator();
  const parts: Buffer[] = [];
  let end = -1;
  let inHead = true;
  let offset = 0;
  const points = [...cuts.filter((c) => c > 0 && c < wire.length).sort((a, b) => a - b), wire.length];
  let start = 0;
  for (const cut of points) {
    const read = Buffer.from(wire.subarray(start, cut));
    let pos = 0;
    while (pos < read.length && end < 0) {
      if (inHead) {
        const h = loc.headEnd(read, pos);
        if (h < 0) break;
        inHead = false;
        loc.startBody(framing, length);
        pos = h;
        continue;
      }
      const spans: number[] = [];
      const e = loc.scanBody(read, pos, spans);
      for (let i = 0; i < spans.length; i += 2) parts.push(read.subarray(spans[i], spans[i + 1]));
      if (e === CONTINUES) break;
      assert.ok(e >= 0, 'confused');
      end = offset + e;
    }
    offset += read.length;
    start = cut;
  }
  return { body: Buffer.concat(parts), end };
}

function randomCuts(length: number, count: number, seed: number): number[] {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x;
  };
  return Array.from({ length: count }, () => next() % length);
}

const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-A: b\r\n';

function chunkedWire(sizes: number[], extension = '', trailers = ''): { wire: Buffer; body: Buffer } {
  const pieces: Buffer[] = [Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\n`, 'latin1')];
  const body: Buffer[] = [];
  let n = 0;
  for (const size of sizes) {
    const data = Buffer.from(Array.from({ length: size }, () => n++ % 251));
    body.push(data);
    pieces.push(Buffer.from(`${size.toString(16)}${extension}\r\n`, 'latin1'), data, Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`0\r\n${trailers}\r\n`, 'latin1'));
  return { wire: Buffer.concat(pieces), body: Buffer.concat(body) };
}

void describe('BodyLocator', () => {
  void it('finds the chunked body llhttp delivers, whatever the reads', () => {
    const cases = [
      chunkedWire([65536, 65536, 100]),
      chunkedWire([1, 2, 3, 0x1a]),
      chunkedWire([300, 7], ';name=value;q="a b"'),
      chunkedWire([10, 20], '', 'X-Trailer: 1\r\nX-Other: two\r\n'),
      chunkedWire([]),
    ];
    for (const [k, { wire, body }] of cases.entries()) {
      const truth = llhttpBody(wire);
      assert.ok(truth.complete);
      assert.deepEqual(truth.body, body);
      for (let seed = 1; seed <= 40; seed++) {
        const cuts = seed === 1 ? [] : randomCuts(wire.length, seed % 9, seed * 7919 + k);
        // The length argument is ignored for a chunked body.
        const r = located(wire, CHUNKED, 91, cuts);
        assert.equal(r.end, wire.length, `case ${k} cuts ${cuts.join(',')}`);
        assert.ok(r.body.equals(body), `case ${k} cuts ${cuts.join(',')}`);
      }
      // One byte per read: every state boundary falls between reads.
      const everyByte = Array.from({ length: wire.length }, (_, i) => i);
      assert.ok(located(wire, CHUNKED, 0, everyByte).body.equals(body), `case ${k} byte by byte`);
    }
  });

  void it('finds a body by length and stops at its end', () => {
    const body = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 256));
    const wire = Buffer.concat([Buffer.from(`${HEAD}Content-Length: 5000\r\n\r\n`), body]);
    assert.deepEqual(llhttpBody(wire).body, body);
    for (let seed = 1; seed <= 20; seed++) {
      const r = located(wire, BY_LENGTH, 5000, randomCuts(wire.length, seed % 6, seed));
      assert.equal(r.end, wire.length);
      assert.ok(r.body.equals(body));
    }
  });

  void it('finds a head whose CRLFCRLF is split across reads', () => {
    const wire = Buffer.from(`${HEAD}Content-Length: 2\r\n\r\nok`, 'latin1');
    const headLength = wire.length - 2;
    for (let cut = headLength - 4; cut <= headLength; cut++) {
      const r = located(wire, BY_LENGTH, 2, [cut]);
      assert.equal(r.body.toString(), 'ok', `cut at ${cut}`);
    }
    // A CR, LF or CRLF alone at the end of a read is not a head's end.
    const loc = new BodyLocator();
    assert.equal(loc.headEnd(Buffer.from('HTTP/1.1 200 OK\r\nA: b\r\n'), 0), -1);
    assert.equal(loc.headEnd(Buffer.from('\r'), 0), -1);
    assert.equal(loc.headEnd(Buffer.from('\nrest'), 0), 1);
  });

  void it('takes everything to the close for a body without length or chunking', () => {
    const loc = new BodyLocator();
    loc.startBody(UNTIL_CLOSE, 0);
    const spans: number[] = [];
    assert.equal(loc.scanBody(Buffer.from('abc'), 1, spans), CONTINUES);
    assert.deepEqual(spans, [1, 3]);
  });

  void it('locates only framings that cannot be read two ways', () => {
    const out = [0];
    assert.equal(locatableFraming(['Content-Length', '12'], out), BY_LENGTH);
    assert.equal(out[0], 12);
    assert.equal(locatableFraming(['transfer-encoding', 'Chunked'], out), CHUNKED);
    assert.equal(locatableFraming(['X-A', 'b'], out), UNTIL_CLOSE);
    // Left to llhttp's own body callback.
    assert.equal(locatableFraming(['Transfer-Encoding', 'gzip, chunked'], out), 0);
    assert.equal(locatableFraming(['Transfer-Encoding', 'chunked', 'Transfer-Encoding', 'chunked'], out), 0);
    assert.equal(locatableFraming(['Content-Length', '1', 'Content-Length', '1'], out), 0);
    assert.equal(locatableFraming(['Content-Length', '1', 'Transfer-Encoding', 'chunked'], out), 0);
    assert.equal(locatableFraming(['Content-Length', '+1'], out), 0);
    assert.equal(locatableFraming(['Content-Length', ''], out), 0);
    assert.equal(locatableFraming(['Content-Length', '1234567890123456'], out), 0);
    assert.equal(locatableFraming(['content-length', '007'], out), BY_LENGTH);
    assert.equal(out[0], 7);
  });
});

/** What llhttp makes of `wire` (requests one after another): each request's body, in order. */
function llhttpRequestBodies(wire: Buffer): Buffer[] {
  return onEveryBackend((backend) => {
    const bodies: Buffer[][] = [];
    const parser = backend.create(REQUEST, {
      onHeadersComplete: () => void bodies.push([]),
      onBody: (chunk: Buffer) => void bodies.at(-1)?.push(chunk),
      onMessageComplete: () => undefined,
    });
    const r = parser.execute(wire);
    parser.close();
    assert.ok(!isParseError(r), `${backend.name}: ${String(r)}`);
    return bodies.map((parts) => Buffer.concat(parts));
  });
}

/** Requests with these body lengths (0: a GET without one), one after another. */
function requestWire(lengths: number[]): Buffer {
  let n = 0;
  const pieces = lengths.map((length) => {
    if (length === 0)
      return Buffer.from('GET /v4/echoes?a=1 HTTP/1.1\r\nHost: h\r\nX-A: b\r\n\r\n', 'latin1');
    const body = Buffer.from(Array.from({ length }, () => n++ % 251));
    const head = `POST /v4/echoes HTTP/1.1\r\nHost: h\r\nContent-Length: ${length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), body]);
  });
  return Buffer.concat(pieces);
}

/** What the client connection locates in `wire` read whole: each body, or null where it declines. */
function locatedRequestBodies(wire: Buffer, lengths: number[]): (Buffer | null)[] {
  let cursor = 0;
  let heads = 0;
  return lengths.map((length) => {
    if (length === 0) {
      heads++;
      return Buffer.alloc(0);
    }
    const start = cursor < 0 ? -1 : locateRequestBody(wire, cursor, heads, length);
    heads = 0;
    cursor = start < 0 ? -1 : start + length;
    return start < 0 ? null : wire.subarray(start, start + length);
  });
}

void describe('locateRequestBody', () => {
  void it('finds the request bodies llhttp delivers, after requests with and without bodies', () => {
    const cases = [[5000], [1], [0, 0, 7], [12, 0, 300, 0, 0, 16384], [0, 5000, 5000]];
    for (const lengths of cases) {
      const wire = requestWire(lengths);
      const truth = llhttpRequestBodies(wire);
      assert.equal(truth.length, lengths.length);
      const found = locatedRequestBodies(wire, lengths);
      for (const [i, body] of found.entries()) assert.deepEqual(body, truth[i], `${lengths.join(',')} #${i}`);
    }
  });

  void it('declines rather than guessing when the read does not hold the body or starts oddly', () => {
    const wire = requestWire([0, 100]);
    // The body is cut short by the end of the read.
    assert.equal(locateRequestBody(wire.subarray(0, wire.length - 1), 0, 1, 100), -1);
    // Empty lines llhttp skips between requests would throw the count off: not located.
    const spaced = Buffer.concat([requestWire([0]), Buffer.from('\r\n'), requestWire([100])]);
    assert.equal(llhttpRequestBodies(spaced)[1]?.length, 100);
    assert.equal(locateRequestBody(spaced, 0, 1, 100), -1);
    // A head not complete in the read.
    assert.equal(locateRequestBody(Buffer.from('POST / HTTP/1.1\r\nContent-Length: 1\r\n'), 0, 0, 1), -1);
  });
});
