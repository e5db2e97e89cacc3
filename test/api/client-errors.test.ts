// Requests the HTTP parser refuses before any route: answered as problems, and logged (even at
// trace level) without the request's bytes, so no credential reaches the log in any encoding.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { createLogger } from '../../src/lib/logger.js';

const SECRET = 'dxt_TraceLogCanary0123456789abcdefABCDEF';

/** Sends raw bytes and returns everything the server answered before it closed. */
function rawRequest(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(data));
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

await onDatabase('sqlite', 'requests refused by the HTTP parser', (target) => {
  let t: Fixture;
  let port: number;
  const lines: string[] = [];
  before(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    t = await startFixture(target, { ROLES: 'api' }, { logger: createLogger('trace', stream) });
    port = Number(new URL(t.baseUrl).port);
  });
  after(() => t.close());

  const problemOf = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    assert.match(head, /content-type: application\/problem\+json/i);
    assert.match(head, /connection: close/i);
    return {
      statusLine: head.split('\r\n')[0],
      body: JSON.parse(body) as { status: number; source: string },
    };
  };

  test('431 for headers too large, 400 for a malformed request: problems, no packet in the log', async () => {
    const big = await rawRequest(
      port,
      `GET /api/v1/datasets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${SECRET}\r\n` +
        `X-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    const tooLarge = problemOf(big);
    assert.match(tooLarge.statusLine ?? '', /^HTTP\/1\.1 431 /);
    assert.equal(tooLarge.body.status, 431);
    assert.equal(tooLarge.body.source, 'api');
    const bad = problemOf(
      await rawRequest(port, `GET /x HTTP/9.9 nonsense\r\nAuthorization: Bearer ${SECRET}\r\n\r\n`),
    );
    assert.equal(bad.body.status, 400);
    // The refusals were logged, and not one line carries the secret in any encoding.
    const log = lines.join('');
    assert.match(log, /request refused by the HTTP parser/);
    const bytes = [...Buffer.from(SECRET)].join(',');
    for (const form of [
      SECRET,
      Buffer.from(SECRET).toString('base64'),
      Buffer.from(SECRET).toString('hex'),
      bytes,
    ]) {
      assert.ok(!log.includes(form), `the log holds the secret as ${form.slice(0, 20)}…`);
    }
  });
});

await onDatabase('sqlite', 'requests refused by the router', (target) => {
  let t: Fixture;
  before(async () => {
    t = await startFixture(target, { ROLES: 'api' });
  });
  after(() => t.close());

  const problemAnswer = async (res: Response, status: number) => {
    assert.equal(res.status, status);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const body = (await res.json()) as { status: number; source: string; detail: string };
    assert.equal(body.status, status);
    assert.equal(body.source, 'api');
    return body;
  };

  test('a path that is not valid percent-encoding is a 400 problem', async () => {
    const body = await problemAnswer(await fetch(`${t.baseUrl}/api/v1/datasets/%ff`), 400);
    assert.match(body.detail, /percent-escape/);
  });

  test('a path parameter over the router limit is a 414 problem', async () => {
    await problemAnswer(await fetch(`${t.baseUrl}/api/v1/datasets/${'a'.repeat(200)}`), 414);
  });

  test('an HTTP/1.1 request without Host is a 400 problem; HTTP/1.0 needs none', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const answer = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /content-type: application\/problem\+json/i);
    assert.match((JSON.parse(body) as { detail: string }).detail, /Host header/);
    const old = await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.match(old, /^HTTP\/1\.1 200 /);
  });
});
