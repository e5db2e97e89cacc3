// One access-log line per request and per-proxy-ID metrics, never carrying secrets or query values.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proxyRegistry } from '../../src/proxy/metrics.js';
import { AUTH, call, eventually, startStack, type Stack } from './stack.js';

void describe('proxy access log and metrics', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s.close();
  });

  void it('logs one line per request with the prefix, path without query values, status, bytes and times', async () => {
    const secretQuery = 'lastName=Sensitive&ssn=123-45-6789';
    await call(`${s.proxy.url}/v4/echoes?${secretQuery}`, { headers: s.headers });
    await call(`${s.proxy.url}/v4/echoes`, {
      method: 'POST',
      headers: { ...s.headers, 'content-type': 'application/json' },
      body: '{"hello":"world"}',
    });
    await call(`${s.proxy.url}/v4/people/404404?token=abc`, { headers: s.headers });
    await call(`${s.proxy.url}/v4/echoes?x=1`, { headers: { 'x-proxyvid': s.id } });
    await eventually(() => s.logLines.filter((l) => l.msg === 'proxy request').length >= 4);
    const lines = s.logLines.filter((l) => l.msg === 'proxy request');
    assert.equal(lines.length, 4);
    const [get, post, notFound, refused] = lines as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    const prefix = s.id.slice(0, 11);
    assert.equal(get.proxyId, prefix);
    assert.equal(get.method, 'GET');
    assert.equal(get.path, '/v4/echoes?lastName&ssn');
    assert.equal(get.status, 200);
    assert.equal(get.bytesIn, 0);
    assert.ok((get.bytesOut as number) > 0);
    assert.equal(typeof get.upstreamMs, 'number');
    assert.ok((get.totalMs as number) >= (get.upstreamMs as number));
    assert.equal(typeof get.reqId, 'string');
    assert.equal(post.method, 'POST');
    assert.equal(post.bytesIn, 17);
    assert.equal(post.bytesOut, 17);
    assert.equal(notFound.status, 404);
    assert.equal(notFound.path, '/v4/people/404404?token');
    assert.equal(refused.status, 401);
    assert.equal(refused.proxyId, 'none');
    assert.equal(refused.upstreamMs, null);

    const text = JSON.stringify(s.logLines);
    for (const secret of [AUTH, AUTH.slice(6), s.id, 'Sensitive', '123-45-6789', 'abc"', 's3cr3t']) {
      assert.ok(!text.includes(secret), `log contains ${secret}`);
    }
  });

  void it('logs at start and counts in a gauge the HTTP parser backend it runs', async () => {
    const chosen = s.config.proxy.httpParser;
    const start = s.logLines.find((l) => l.msg === 'proxy HTTP parser');
    assert.ok(start !== undefined);
    assert.equal(start.setting, chosen);
    const backend = start.backend as string;
    assert.ok(chosen === 'auto' ? ['builtin', 'wasm'].includes(backend) : backend === chosen, backend);
    const text = await proxyRegistry([s.proxy.metrics.toJSON(), s.proxy.metrics.toJSON()]).metrics();
    assert.match(text, new RegExp(`dx_proxy_http_parser_processes\\{backend="${backend}"\\} 2`));
  });

  void it('exposes counters and latency histograms per proxy ID prefix, method and status class', async () => {
    await call(`${s.proxy.url}/v4/echoes?secret=value`, { headers: s.headers });
    await call(`${s.proxy.url}/v4/status/503`, { headers: s.headers });
    const text = await proxyRegistry([s.proxy.metrics.toJSON()]).metrics();
    const prefix = s.id.slice(0, 11);
    assert.match(
      text,
      new RegExp(`dx_proxy_requests_total\\{proxy_id="${prefix}",method="GET",status_class="2xx"\\} \\d+`),
    );
    assert.match(
      text,
      new RegExp(`dx_proxy_requests_total\\{proxy_id="${prefix}",method="GET",status_class="5xx"\\} 1`),
    );
    assert.match(text, /dx_proxy_requests_total\{proxy_id="none",method="GET",status_class="4xx"\} \d+/);
    assert.match(
      text,
      new RegExp(
        `dx_proxy_request_duration_seconds_count\\{proxy_id="${prefix}",method="GET",status_class="2xx"\\}`,
      ),
    );
    assert.match(
      text,
      new RegExp(`dx_proxy_upstream_duration_seconds_bucket\\{le="0.005",proxy_id="${prefix}"`),
    );
    assert.match(text, new RegExp(`dx_proxy_response_bytes_total\\{proxy_id="${prefix}"\\} \\d+`));
    for (const secret of [AUTH.slice(6), s.id, 'value'])
      assert.ok(!text.includes(secret), `metrics contain ${secret}`);
  });
});
