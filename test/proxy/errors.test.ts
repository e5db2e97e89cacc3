// The proxy's own answers: 401/400 problems for bad headers, 502/504 for upstream failures (docs/proxy.md).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AUTH, call, startStack, type Reply, type Stack } from './stack.js';

const PROXY_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'authorization_missing',
  413: 'too_large',
  414: 'uri_too_long',
  429: 'rate_limited',
  431: 'headers_too_large',
  502: 'bad_gateway',
  504: 'gateway_timeout',
};

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

function assertProblem(r: Reply, status: number, type: string, title: string, detail?: RegExp): void {
  assert.equal(r.status, status);
  assert.equal(r.headers['content-type'], 'application/problem+json');
  const body = JSON.parse(r.body.toString()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), [
    'code',
    'detail',
    'errors',
    'source',
    'status',
    'title',
    'traceId',
    'type',
  ]);
  assert.equal(body.type, type);
  assert.equal(body.title, title);
  assert.equal(body.status, status);
  // The catalogue's code: the specific one where the proxy names it, else the status's general one.
  assert.equal(body.code, PROXY_CODES[status]);
  assert.deepEqual(body.errors, {});
  assert.equal(body.source, 'proxy');
  assert.equal(typeof body.traceId, 'string');
  assert.ok((body.traceId as string).length > 0);
  if (detail !== undefined) assert.match(body.detail as string, detail);
}

const unauthorized = (r: Reply) =>
  assertProblem(
    r,
    401,
    'https://tools.ietf.org/html/rfc9110#section-15.5.2',
    'Missing Authorization Header',
    /^Requests must carry a valid Authorization header\.$/,
  );
const badProxyId = (r: Reply) =>
  assertProblem(
    r,
    400,
    'https://tools.ietf.org/html/rfc9110#section-15.5.1',
    'Invalid X-PROXYVID Header',
    /^Requests must carry a valid X-PROXYVID header\.$/,
  );

void describe('proxy errors', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({
      PROXY_BODY_LIMIT_BYTES: '1024',
      PROXY_TIMEOUT_MS: '300',
      PROXY_ID_REFRESH_MS: '200',
    });
  });
  after(async () => {
    await s.close();
  });

  void it('401 for a missing or malformed Authorization header, checked before X-PROXYVID', async () => {
    const bad = [
      undefined,
      '',
      'Bearer abc',
      'Basic',
      'Basic !!!notbase64',
      'Basic YWJj', // "abc": no colon
      basic(':key|1'), // empty name
      basic('app:|1'), // empty key
      basic('app:key'), // no mode
      basic('app:key|'), // empty mode
      basic('app:key|one'), // mode not an integer
      basic('app:key|1.5'),
    ];
    for (const authorization of bad) {
      const headers: Record<string, string> = {};
      if (authorization !== undefined) headers.authorization = authorization;
      // No X-PROXYVID either: Authorization is checked first, so these are all 401.
      unauthorized(await call(`${s.proxy.url}/v4/echoes`, { headers }));
      unauthorized(await call(`${s.proxy.url}/v4/echoes`, { headers: { ...headers, 'x-proxyvid': s.id } }));
    }
  });

  void it('accepts any well-formed Basic credentials, including a key containing ":" and "|"', async () => {
    for (const creds of ['app:key|0', 'my app:k:e|y|12', 'app:key|-1']) {
      const r = await call(`${s.proxy.url}/v4/echoes`, {
        headers: { authorization: basic(creds), 'x-proxyvid': s.id },
      });
      assert.equal(r.status, 200, creds);
    }
    const lower = await call(`${s.proxy.url}/v4/echoes`, {
      headers: { authorization: `basic ${Buffer.from('a:b|1').toString('base64')}`, 'x-proxyvid': s.id },
    });
    assert.equal(lower.status, 200);
  });

  void it('400 for a missing, malformed or unknown X-PROXYVID', async () => {
    badProxyId(await call(`${s.proxy.url}/v4/echoes`, { headers: { authorization: AUTH } }));
    for (const id of [
      '',
      'nope',
      `${s.id}x`,
      s.id.slice(0, -1) + (s.id.endsWith('A') ? 'B' : 'A'),
      s.id.slice(0, 11),
    ]) {
      badProxyId(
        await call(`${s.proxy.url}/v4/echoes`, { headers: { authorization: AUTH, 'x-proxyvid': id } }),
      );
    }
  });

  void it('X-MIGVID (the header of existing DXAPI callers) is checked like X-PROXYVID', async () => {
    const url = `${s.proxy.url}/v4/echoes`;
    const ok = await call(url, { headers: { authorization: AUTH, 'x-migvid': s.id } });
    assert.equal(ok.status, 200);
    const echo = JSON.parse(ok.body.toString()) as { headers: Record<string, string> };
    assert.equal(echo.headers['x-migvid'], undefined, 'stripped before the upstream');
    assert.equal(echo.headers['x-proxyvid'], undefined);
    // Both, naming the same ID, are one ID; naming two is ambiguous.
    const both = { authorization: AUTH, 'x-migvid': s.id, 'x-proxyvid': s.id };
    assert.equal((await call(url, { headers: both })).status, 200);
    badProxyId(await call(url, { headers: { ...both, 'x-proxyvid': `${s.id}x` } }));
    // The 400 names the header the caller used.
    for (const id of ['', 'nope', `${s.id}x`]) {
      assertProblem(
        await call(url, { headers: { authorization: AUTH, 'x-migvid': id } }),
        400,
        'https://tools.ietf.org/html/rfc9110#section-15.5.1',
        'Invalid X-MIGVID Header',
        /^Requests must carry a valid X-MIGVID header\.$/,
      );
    }
  });

  void it('a revoked proxy ID gives 400 once the periodic refresh has run', async () => {
    const { id, info } = await s.store.create('soon revoked');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(
      (await call(`${s.proxy.url}/v4/echoes`, { headers: { authorization: AUTH, 'x-proxyvid': id } })).status,
      200,
    );
    await s.store.revoke(info.prefix);
    await new Promise((r) => setTimeout(r, 400));
    badProxyId(
      await call(`${s.proxy.url}/v4/echoes`, { headers: { authorization: AUTH, 'x-proxyvid': id } }),
    );
  });

  void it('413 when Content-Length is over the limit, and when a chunked body passes it', async () => {
    const big = 'x'.repeat(2048);
    assertProblem(
      await call(`${s.proxy.url}/v4/echoes`, { method: 'POST', headers: s.headers, body: big }),
      413,
      'https://tools.ietf.org/html/rfc9110#section-15.5.14',
      'Content Too Large',
      /1024 bytes/,
    );
    async function* chunks() {
      for (let i = 0; i < 8; i++) {
        yield Buffer.alloc(512, 97);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    assertProblem(
      await call(`${s.proxy.url}/v4/upload`, {
        method: 'POST',
        headers: s.headers,
        body: Readable.from(chunks()),
      }),
      413,
      'https://tools.ietf.org/html/rfc9110#section-15.5.14',
      'Content Too Large',
    );
    const fits = await call(`${s.proxy.url}/v4/echoes`, {
      method: 'POST',
      headers: s.headers,
      body: '{"a":1}',
    });
    assert.equal(fits.status, 200);
  });

  void it('504 when the upstream does not answer within PROXY_TIMEOUT_MS', async () => {
    const started = Date.now();
    const r = await call(`${s.proxy.url}/v4/slow?ms=2000`, { headers: s.headers });
    assertProblem(r, 504, 'https://tools.ietf.org/html/rfc9110#section-15.6.5', 'Gateway Timeout', /300 ms/);
    assert.ok(Date.now() - started < 1500);
    const fast = await call(`${s.proxy.url}/v4/slow?ms=10`, { headers: s.headers });
    assert.equal(fast.status, 200);
  });
});

void describe('proxy errors: upstream down, rate limit, new IDs', () => {
  void it('a proxy ID created after start works at once (a miss reloads the set, at most once a second)', async () => {
    const s = await startStack({ PROXY_ID_REFRESH_MS: '600000' });
    try {
      const { id } = await s.store.create('late client');
      const headers = { authorization: AUTH, 'x-proxyvid': id };
      assert.equal((await call(`${s.proxy.url}/v4/echoes`, { headers })).status, 200);
      // Unknown but well-formed IDs right after: refused without another reload inside the second.
      const second = await s.store.create('second late client');
      badProxyId(
        await call(`${s.proxy.url}/v4/echoes`, { headers: { ...headers, 'x-proxyvid': second.id } }),
      );
      await new Promise((r) => setTimeout(r, 1100));
      const r = await call(`${s.proxy.url}/v4/echoes`, { headers: { ...headers, 'x-proxyvid': second.id } });
      assert.equal(r.status, 200);
    } finally {
      await s.close();
    }
  });

  void it('502 when the upstream is unreachable or resets the connection', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const s = await startStack({}, `http://127.0.0.1:${port}`);
    try {
      assertProblem(
        await call(`${s.proxy.url}/v4/echoes`, { headers: s.headers }),
        502,
        'https://tools.ietf.org/html/rfc9110#section-15.6.3',
        'Bad Gateway',
      );
    } finally {
      await s.close();
    }
    // An upstream that accepts and drops every connection.
    const rude = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => rude.listen(0, '127.0.0.1', resolve));
    const s2 = await startStack({}, `http://127.0.0.1:${(rude.address() as AddressInfo).port}`);
    try {
      assertProblem(
        await call(`${s2.proxy.url}/v4/echoes`, { headers: s2.headers }),
        502,
        'https://tools.ietf.org/html/rfc9110#section-15.6.3',
        'Bad Gateway',
      );
    } finally {
      await s2.close();
      rude.close();
    }
  });

  void it('502 after the upstream stops', async () => {
    const s = await startStack();
    try {
      assert.equal((await call(`${s.proxy.url}/v4/echoes`, { headers: s.headers })).status, 200);
      await s.upstream.close();
      assertProblem(
        await call(`${s.proxy.url}/v4/echoes`, { headers: s.headers }),
        502,
        'https://tools.ietf.org/html/rfc9110#section-15.6.3',
        'Bad Gateway',
      );
    } finally {
      await s.close();
    }
  });

  void it('429 with Retry-After once a proxy ID exceeds its rate; other IDs are not affected', async () => {
    const s = await startStack({ PROXY_RATE_LIMIT: '1', PROXY_RATE_BURST: '3' });
    try {
      const statuses: number[] = [];
      let limited: Reply | undefined;
      for (let i = 0; i < 5; i++) {
        const r = await call(`${s.proxy.url}/v4/echoes`, { headers: s.headers });
        statuses.push(r.status);
        if (r.status === 429) limited = r;
      }
      assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
      assert.ok(limited !== undefined, `no 429 in ${statuses.join(',')}`);
      assertProblem(limited, 429, 'https://tools.ietf.org/html/rfc6585#section-4', 'Too Many Requests');
      assert.match(limited.headers['retry-after'] as string, /^[1-9][0-9]*$/);
      const other = await s.store.create('other client');
      const r = await call(`${s.proxy.url}/v4/echoes`, {
        headers: { authorization: AUTH, 'x-proxyvid': other.id },
      });
      assert.equal(r.status, 200);
    } finally {
      await s.close();
    }
  });
});
