import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseHeaders, scanRequestHeaders } from './headers.js';

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
