import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linesAsPinoWrites } from '../../test/support/pino-lines.js';

// Run in a child so the lines go to a real stdout through the destination createLogger makes (the
// batched path): 600 requests, more than two batches, then the flush of the remainder. Each is also
// logged as before, through a request logger (the role logger's child with the request's id and
// trace) of a pino logger writing to memory: its lines are the expected ones.
const BATCHED = `
import { Writable } from 'node:stream';
import { pino } from ${JSON.stringify(import.meta.resolve('pino'))};
import { createLogger, roleLogger } from ${JSON.stringify(new URL('../lib/logger.js', import.meta.url).href)};
import { accessLine, ApiAccessLines } from ${JSON.stringify(new URL('./access-log.js', import.meta.url).href)};
let expected = '';
const memory = new Writable({ write(chunk, _enc, done) { expected += chunk; done(); } });
const reference = roleLogger(pino({ level: 'info' }, memory), 'api');
const lines = new ApiAccessLines(roleLogger(createLogger('info'), 'api'));
if (!lines.formatsHere) throw new Error('the destination of createLogger is not written directly');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
for (let i = 0; i < 600; i++) {
  const headers = {};
  // A traceparent on every third, an invalid one on some of them; a tracestate on every sixth,
  // every other one of which is not printable ASCII: only the valid and printable are logged.
  const traced = i % 3 === 0 && i % 4 !== 1;
  const stated = i % 6 === 0 && i % 12 !== 0;
  if (i % 3 === 0) headers.traceparent = traced ? TRACEPARENT : 'not a traceparent';
  if (i % 6 === 0) headers.tracestate = stated ? 'vendor="x"' : 'vendor=caf\\u00e9';
  if (i % 2 === 0) headers['content-length'] = String(i * 3);
  const request = {
    id: i % 11 === 0 ? 'id with "quotes" ' + i : 'r-' + i,
    method: i % 2 ? 'POST' : 'GET',
    url: i % 5 === 0 ? '/api/v1/datasets/abc/records?pageSize=10&pageToken=secret' : '/api/v1/caf\\u00e9s',
    routeOptions: { url: i % 7 === 0 ? undefined : '/api/v1/datasets/:id/records' },
    headers,
    ip: i % 8 === 0 ? undefined : '127.0.0.1',
  };
  const reply = {
    statusCode: 200 + (i % 3) * 100,
    elapsedTime: i / 3,
    getHeader: (name) => (name === 'content-length' && i % 4 !== 0 ? String(i * 11) : undefined),
  };
  lines.write(request, reply);
  const bindings = { reqId: request.id };
  if (traced) {
    bindings.traceparent = TRACEPARENT;
    if (stated) bindings.tracestate = 'vendor="x"';
  }
  reference.child(bindings).info(accessLine(request, reply), 'api request');
}
await lines.flush();
process.stderr.write(expected);
`;

void describe('ApiAccessLines', () => {
  void it('writes batched lines in order, each the line pino writes through the request logger', async () => {
    const stdout = await linesAsPinoWrites(BATCHED, 600);
    for (const line of stdout.trimEnd().split('\n')) assert.match(line, /"role":"api","reqId":/);
    // Query values never reach the log.
    assert.ok(!stdout.includes('secret'));
  });
});
