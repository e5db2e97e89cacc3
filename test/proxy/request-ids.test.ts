// Request ids through the proxy on the wire: a caller's safe X-Request-Id is kept, passed upstream
// and returned; otherwise the proxy makes one, which the upstream, the client, the problem body
// and the access log all see. W3C trace context passes unchanged.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { call, eventually, startStack, type Stack } from './stack.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

interface Echo {
  headers: Record<string, string | string[]>;
}

void describe('proxy request ids', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s.close();
  });

  const accessLine = async (reqId: string) => {
    await eventually(() => s.logLines.some((l) => l.msg === 'proxy request' && l.reqId === reqId));
    return s.logLines.find((l) => l.msg === 'proxy request' && l.reqId === reqId) as Record<string, unknown>;
  };

  void it("keeps the caller's id: upstream, response and access log; traceparent and tracestate unchanged", async () => {
    const r = await call(`${s.proxy.url}/v4/echoes`, {
      headers: { ...s.headers, 'x-request-id': 'call-"1"', traceparent: TRACEPARENT, tracestate: 'a=b,c=d' },
    });
    assert.equal(r.status, 200);
    const echoed = (JSON.parse(r.body.toString()) as Echo).headers;
    assert.equal(echoed['x-request-id'], 'call-"1"');
    assert.equal(echoed.traceparent, TRACEPARENT);
    assert.equal(echoed.tracestate, 'a=b,c=d');
    assert.equal(r.headers['x-request-id'], 'call-"1"');
    assert.equal((await accessLine('call-"1"')).status, 200);
  });

  void it('makes an id when there is none or it is unsafe, and sends exactly one upstream', async () => {
    const ids = new Set<string>();
    for (const given of [undefined, 'white space', 'z'.repeat(201)]) {
      const r = await call(`${s.proxy.url}/v4/echoes`, {
        headers: { ...s.headers, ...(given !== undefined ? { 'x-request-id': given } : {}) },
      });
      const echoed = (JSON.parse(r.body.toString()) as Echo).headers;
      const made = r.headers['x-request-id'] as string;
      assert.equal(typeof made, 'string');
      assert.notEqual(made, given);
      assert.equal(echoed['x-request-id'], made, 'one id upstream, the one returned');
      await accessLine(made);
      ids.add(made);
    }
    assert.equal(ids.size, 3, 'each request its own id');
  });

  void it("puts the id on the proxy's own problems, as their traceId", async () => {
    const r = await call(`${s.proxy.url}/v4/echoes`, { headers: { 'x-request-id': 'refused-1' } });
    assert.equal(r.status, 401);
    assert.equal(r.headers['x-request-id'], 'refused-1');
    assert.equal((JSON.parse(r.body.toString()) as { traceId: string }).traceId, 'refused-1');
    assert.equal((await accessLine('refused-1')).proxyId, 'none');
  });

  void it("leaves the upstream's own X-Request-Id answer alone", async () => {
    const upstream = createServer((_req, res) =>
      res.writeHead(200, { 'x-request-id': 'upstream-says' }).end(),
    );
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const other = await startStack({}, `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
    try {
      const r = await call(`${other.proxy.url}/x`, { headers: { ...other.headers, 'x-request-id': 'mine' } });
      assert.equal(r.headers['x-request-id'], 'upstream-says');
    } finally {
      await other.close();
      upstream.close();
    }
  });
});
