// The proxy forwards 1:1: same status, headers that matter, and byte-identical bodies as a direct call.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { AUTH, call, startStack, type Stack } from './stack.js';

void describe('proxy forwarding', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s.close();
  });

  const both = async (path: string, options: Parameters<typeof call>[1] = {}) => {
    const direct = await call(s.upstream.url + path, {
      ...options,
      headers: { authorization: AUTH, ...options.headers },
    });
    const proxied = await call(s.proxy.url + path, {
      ...options,
      headers: { ...s.headers, ...options.headers },
    });
    return { direct, proxied };
  };

  void it('GET: path and query reach the upstream unchanged; Host is the upstream, X-PROXYVID is gone', async () => {
    const path = '/v4/echoes?state=DC&name=O%27Brien&tags=a&tags=b&empty=';
    // node:http, not undici, as the client: undici will not send a Connection header naming others.
    const proxied = await nodeGet(s.proxy.url + path, {
      ...s.headers,
      'x-custom': 'kept',
      connection: 'keep-alive, X-Drop',
      'x-drop': 'me',
      'keep-alive': 'timeout=5',
      'proxy-authorization': 'Basic c2VjcmV0',
      te: 'trailers',
    });
    assert.equal(proxied.status, 200);
    const echo = JSON.parse(proxied.body) as {
      path: string;
      query: unknown;
      headers: Record<string, string>;
    };
    assert.equal(echo.path, '/v4/echoes');
    assert.deepEqual(echo.query, { state: 'DC', name: "O'Brien", tags: 'b', empty: '' });
    assert.equal(echo.headers.host, new URL(s.upstream.url).host);
    assert.equal(echo.headers.authorization, AUTH, 'Authorization passed untouched');
    assert.equal(echo.headers['x-custom'], 'kept');
    assert.equal(echo.headers['x-proxyvid'], undefined);
    assert.equal(echo.headers['x-drop'], undefined, 'headers named in Connection are hop-by-hop');
    for (const h of ['keep-alive', 'proxy-authorization', 'te']) assert.equal(echo.headers[h], undefined, h);
  });

  void it('the raw request target is forwarded byte for byte', async () => {
    const path = '/v4/echoes?q=a%20b+c&x=%2F&=odd&&flag';
    const { proxied } = await both(path);
    const echo = JSON.parse(proxied.body.toString()) as { query: Record<string, string> };
    assert.deepEqual(echo.query, Object.fromEntries(new URL(path, 'http://x').searchParams));
  });

  void it('POST JSON: body echoed identically, status and content-type as direct', async () => {
    const body = JSON.stringify({ firstName: 'Ada', nested: { list: [1, 2, 3] }, unicode: 'é✓' });
    const { direct, proxied } = await both('/v4/echoes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(proxied.status, direct.status);
    assert.equal(proxied.headers['content-type'], direct.headers['content-type']);
    assert.deepEqual(proxied.body, direct.body);
    assert.equal(proxied.body.toString(), body);
  });

  void it('upstream 4xx and 5xx bodies pass through untouched', async () => {
    for (const path of [
      '/v4/people/999',
      '/v4/status/422',
      '/v4/status/500',
      '/v4/status/503',
      '/v4/nowhere',
    ]) {
      const { direct, proxied } = await both(path);
      assert.equal(proxied.status, direct.status, path);
      assert.deepEqual(proxied.body, direct.body, path);
      assert.match(proxied.headers['content-type'] as string, /^application\/json/, path);
    }
    const known = await both('/v4/people/1001');
    assert.equal(known.proxied.status, 200);
    assert.deepEqual(known.proxied.body, known.direct.body);
  });

  void it("the upstream's own 401 passes through when the credentials are well formed but wrong", async () => {
    // Only the shape of Authorization is the proxy's business; whether it is right is the upstream's.
    const wrong = `Basic ${Buffer.from('testApp:invalid|1').toString('base64')}`;
    const { direct, proxied } = await both('/v4/echoes', { headers: { authorization: wrong } });
    assert.equal(proxied.status, 401);
    assert.deepEqual(proxied.body, direct.body);
    assert.deepEqual(JSON.parse(proxied.body.toString()), {
      errors: [{ code: 'AUTHORIZATION_ERROR', text: 'Authorization has been denied for this request.' }],
    });
  });

  void it('a 20 MB streamed response arrives byte-identical', async () => {
    const bytes = 20 * 1024 * 1024;
    const res = await request(`${s.proxy.url}/v4/stream?bytes=${bytes}`, { headers: s.headers });
    assert.equal(res.statusCode, 200);
    const direct = createHash('sha256');
    let n = 0;
    const viaProxy = createHash('sha256');
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      for (let i = 0; i < buf.length; i++) {
        if (buf[i] !== (n + i) % 256) assert.fail(`byte ${n + i} differs`);
      }
      n += buf.length;
      viaProxy.update(buf);
    }
    assert.equal(n, bytes);
    const d = await request(`${s.upstream.url}/v4/stream?bytes=${bytes}`, {
      headers: { authorization: AUTH },
    });
    for await (const chunk of d.body) direct.update(chunk as Buffer);
    assert.equal(viaProxy.digest('hex'), direct.digest('hex'));
  });

  void it('a chunked request body streams through (no Content-Length)', async () => {
    async function* chunks() {
      for (let i = 0; i < 64; i++) yield Buffer.alloc(16 * 1024, i);
    }
    const r = await call(`${s.proxy.url}/v4/upload`, {
      method: 'POST',
      headers: s.headers,
      body: Readable.from(chunks()),
    });
    assert.equal(r.status, 200);
    const expected = createHash('sha256');
    for (let i = 0; i < 64; i++) expected.update(Buffer.alloc(16 * 1024, i));
    assert.deepEqual(JSON.parse(r.body.toString()), {
      bytes: 64 * 16 * 1024,
      sha256: expected.digest('hex'),
    });
  });

  void it('HEAD, PUT, PATCH and DELETE are forwarded with their method', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const r = await call(`${s.proxy.url}/v4/echoes`, { method, headers: s.headers });
      assert.equal((JSON.parse(r.body.toString()) as { method: string }).method, method);
    }
    const head = await call(`${s.proxy.url}/v4/people/1001`, { method: 'HEAD', headers: s.headers });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });

  void it('a webhook the upstream sends reaches the callback server directly', async () => {
    let received: ((body: string) => void) | undefined;
    const got = new Promise<string>((resolve) => (received = resolve));
    const callback = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.end();
        received?.(body);
      });
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    try {
      const callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/hooks`;
      const r = await call(`${s.proxy.url}/v4/webhooks/test`, {
        method: 'POST',
        headers: { ...s.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ callbackUrl }),
      });
      assert.equal(r.status, 202);
      assert.deepEqual(JSON.parse(r.body.toString()), { status: 'queued', callbackUrl });
      const hook = JSON.parse(await got) as { event: string };
      assert.equal(hook.event, 'webhook.test');
    } finally {
      callback.close();
    }
  });
});

function nodeGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}
