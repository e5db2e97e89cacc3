// Benchmark of the proxy's HTTP/1 parser backends (not a test): each parses the proxy's usual
// messages over and over on one parser; prints the best of 7 rounds in ns per message as a
// markdown table (docs/proxy-parser.md quotes it).
// Usage: npm run build && node dist/bench/parser-backends.js [parses per round, default 100000]
import { availableParserBackends, REQUEST, RESPONSE } from '../src/proxy/parser/index.js';
import type { ParserBackend, ParserType } from '../src/proxy/parser/parser.js';

const PARSES = Number(process.argv[2] ?? 100_000);
const ROUNDS = 7;
const CHECKS =
  'Host: 127.0.0.1:8081\r\nAuthorization: Basic YmVuY2hBcHA6MDEyMzQ1Njc4OWFiY2RlZnwx\r\n' +
  'X-ProxyVID: pv_abcdefghijklmnopqrstuvwxyz012345\r\n';
const KB = 'x'.repeat(1024);
interface Message {
  label: string;
  type: ParserType;
  wire: Buffer;
  reportBody: boolean;
}

const MESSAGES: Message[] = [
  {
    label: 'GET head (6 headers)',
    type: REQUEST,
    wire: Buffer.from(
      `GET /v4/echoes?state=DC&limit=10 HTTP/1.1\r\n${CHECKS}User-Agent: wrk\r\nAccept: */*\r\n\r\n`,
    ),
    reportBody: true,
  },
  ...[true, false].map((reportBody): Message => ({
    label: `POST with 1 KB body, ${reportBody ? 'body copied and reported' : 'no body callback'}`,
    type: REQUEST,
    wire: Buffer.from(
      `POST /v4/echoes HTTP/1.1\r\n${CHECKS}Content-Type: application/json\r\nContent-Length: 1024\r\n\r\n${KB}`,
    ),
    reportBody,
  })),
  ...[true, false].map((reportBody): Message => ({
    label: `response 200 + 1 KB, ${reportBody ? 'body copied and reported' : 'no body callback'}`,
    type: RESPONSE,
    wire: Buffer.from(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n' +
        `Date: Fri, 27 Nov 2026 05:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n${KB}`,
    ),
    reportBody,
  })),
];

/** Best ns per message of `wire` parsed PARSES times, over ROUNDS rounds after a warm-up. */
function measure(backend: ParserBackend, type: ParserType, wire: Buffer, reportBody: boolean): number {
  let complete = 0;
  const parser = backend.create(type, {
    onHeadersComplete: () => 0,
    onBody: () => undefined,
    onMessageComplete: () => void complete++,
  });
  if (!reportBody) parser.setBodyCallback(null);
  for (let i = 0; i < PARSES / 5; i++) parser.execute(wire);
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PARSES; i++) parser.execute(wire);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / PARSES);
  }
  parser.close();
  if (complete !== PARSES / 5 + ROUNDS * PARSES)
    throw new Error(`${backend.name} did not parse every message`);
  return best;
}

const backends = availableParserBackends();
console.log(`Node ${process.version}, best of ${ROUNDS} × ${PARSES} parses, ns per message\n`);
console.log(`| message | ${backends.map((b) => b.name).join(' | ')} |`);
console.log(`| --- | ${backends.map(() => '---:').join(' | ')} |`);
for (const m of MESSAGES)
  console.log(
    `| ${m.label} | ${backends.map((b) => measure(b, m.type, m.wire, m.reportBody).toFixed(0)).join(' | ')} |`,
  );
