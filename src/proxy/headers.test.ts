import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseHeaders, scanRequestHeaders, scanResponseHeaders } from './headers.js';

void describe('scanRequestHeaders', () => {
  void it('keeps end-to-end headers in order and drops hop-by-hop ones, X-PROXYVID, Host and Expect', () => {
    const scan = scanRequestHeaders([
      'Host',
      'proxy.local',
      'Authorization',
      'Basic YTpifDE=',
      'X-PROXYVID',
      'pv_x',
      'Connection',
      'keep-alive, X-Hop',
      'X-Hop',
      'gone',
      'Keep-Alive',
      'timeout=5',
      'TE',
      'trailers',
      'Trailer',
      'X-T',
      'Upgrade',
      'h2c',
      'Proxy-Authorization',
      'Basic Zm9v',
      'Proxy-Whatever',
      '1',
      'Expect',
      '100-continue',
      'Content-Type',
      'application/json',
      'Content-Length',
      '12',
      'Accept',
      'a',
      'Accept',
      'b',
    ]);
    assert.deepEqual(scan.forward, [
      'Authorization',
      'Basic YTpifDE=',
      'Content-Type',
      'application/json',
      'Content-Length',
      '12',
      'Accept',
      'a',
      'Accept',
      'b',
    ]);
    assert.equal(scan.authorization, 'Basic YTpifDE=');
    assert.equal(scan.proxyId, 'pv_x');
    assert.equal(scan.contentLength, 12);
    assert.equal(scan.hasBody, true);
  });

  void it('marks repeated credentials as ambiguous and absent ones as null', () => {
    const twice = scanRequestHeaders([
      'authorization',
      'a',
      'Authorization',
      'b',
      'x-proxyvid',
      '1',
      'X-ProxyVID',
      '2',
    ]);
    assert.equal(twice.authorization, undefined);
    assert.equal(twice.proxyId, undefined);
    const none = scanRequestHeaders(['accept', '*/*']);
    assert.equal(none.authorization, null);
    assert.equal(none.proxyId, null);
    assert.equal(none.hasBody, false);
    assert.equal(none.contentLength, -1);
  });

  void it('a chunked body has a body of unknown length; Connection cannot hide Authorization', () => {
    const scan = scanRequestHeaders([
      'Transfer-Encoding',
      'chunked',
      'Connection',
      'authorization',
      'Authorization',
      'x',
    ]);
    assert.equal(scan.hasBody, true);
    assert.equal(scan.contentLength, -1);
    assert.deepEqual(scan.forward, ['Authorization', 'x']);
  });
});

void describe('responseHeaders', () => {
  void it('converts raw buffers and drops hop-by-hop headers', () => {
    const raw = [
      'Content-Type',
      'text/plain',
      'Connection',
      'keep-alive, X-Secret-Hop',
      'Keep-Alive',
      'timeout=5',
      'Transfer-Encoding',
      'chunked',
      'X-Secret-Hop',
      '1',
      'Set-Cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
    ].map((s) => Buffer.from(s));
    assert.deepEqual(responseHeaders(raw), [
      'Content-Type',
      'text/plain',
      'Set-Cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
    ]);
  });
});

void describe('X-Request-Id', () => {
  void it("keeps a caller's safe X-Request-Id, once, and forwards it", () => {
    const scan = scanRequestHeaders(['X-Request-Id', 'order_"7"/a', 'x-request-id', 'second', 'Accept', 'a']);
    assert.equal(scan.requestId, 'order_"7"/a');
    assert.deepEqual(scan.forward, ['X-Request-Id', 'order_"7"/a', 'Accept', 'a']);
  });
  void it('drops an unsafe one (the proxy then makes its own) and keeps traceparent unchanged', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    for (const bad of ['has space', 'x'.repeat(201), '']) {
      const scan = scanRequestHeaders(['X-Request-Id', bad, 'traceparent', traceparent, 'tracestate', 'a=b']);
      assert.equal(scan.requestId, null);
      assert.deepEqual(scan.forward, ['traceparent', traceparent, 'tracestate', 'a=b']);
    }
  });
  void it('a Connection header naming it drops it, and the proxy makes its own', () => {
    const scan = scanRequestHeaders(['X-Request-Id', 'r1', 'Connection', 'x-request-id']);
    assert.equal(scan.requestId, null);
    assert.deepEqual(scan.forward, []);
  });
  void it("notes whether the upstream's response carries one", () => {
    assert.equal(scanResponseHeaders(['X-Request-Id', 'r1', 'Content-Length', '0']).hasRequestId, true);
    assert.equal(scanResponseHeaders(['Content-Length', '0']).hasRequestId, false);
  });
});
