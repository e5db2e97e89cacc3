// The service's platform: health, readiness, request ids, problem-details for every failure, OpenAPI, metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/http/app.js';
import { createServices } from '../../src/runtime/services.js';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { problemOf } from '../support/onboarding.js';

await onDatabase('sqlite', 'platform', (target) => {
  let t: Fixture;
  before(async () => {
    t = await startFixture(target);
  });
  after(() => t.close());

  test('/healthz and /readyz answer', async () => {
    assert.deepEqual((await t.app.inject('/healthz')).json(), { status: 'ok' });
    const ready = await t.app.inject('/readyz');
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
  });

  test('X-Request-Id is honoured and returned, and becomes the traceId of problems', async () => {
    const res = await t.app.inject({ url: '/api/v1/nowhere', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(res.headers['x-request-id'], 'abc-123');
    assert.equal(problemOf(res).traceId, 'abc-123');
    const generated = await t.app.inject('/healthz');
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const unsafe = await t.app.inject({
      url: '/healthz',
      headers: { 'x-request-id': 'bad id\twith spaces' },
    });
    assert.notEqual(unsafe.headers['x-request-id'], 'bad id\twith spaces');
    // The proxy's rule: any visible ASCII up to 200 characters, so both log the same id.
    const wide = `order_"7"/${'x'.repeat(190)}`;
    assert.equal(
      (await t.app.inject({ url: '/healthz', headers: { 'x-request-id': wide } })).headers['x-request-id'],
      wide,
    );
    const long = 'y'.repeat(201);
    assert.notEqual(
      (await t.app.inject({ url: '/healthz', headers: { 'x-request-id': long } })).headers['x-request-id'],
      long,
    );
  });

  test('/readyz answers 503 once the process drains; /metrics can be kept off the API', async () => {
    let draining = false;
    const app = await buildApp(t.config, await createServices(t.config, t.database), {
      logger: false,
      draining: () => draining,
      metricsOnAdminPort: true,
    });
    try {
      assert.equal((await app.inject('/readyz')).statusCode, 200);
      draining = true;
      const ready = await app.inject('/readyz');
      assert.equal(ready.statusCode, 503);
      assert.match(problemOf(ready).detail, /shutting down/);
      assert.equal((await app.inject('/metrics')).statusCode, 404);
      assert.equal((await t.app.inject('/metrics')).statusCode, 200);
    } finally {
      await app.close();
    }
  });

  test('unknown routes are 404 problems', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/api/v1/apps/me' });
    assert.equal(res.statusCode, 404);
    const p = problemOf(res);
    assert.deepEqual(Object.keys(p).sort(), [
      'code',
      'detail',
      'errors',
      'source',
      'status',
      'title',
      'traceId',
      'type',
    ]);
    assert.equal(p.code, 'not_found');
    assert.equal(p.source, 'api');
    assert.deepEqual(p.errors, {});
  });

  test('malformed JSON is 400 and a wrong media type 415, both problems', async () => {
    const headers = { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' };
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/datasets', headers, payload: '{"name":' });
    assert.equal(bad.statusCode, 400);
    assert.equal(problemOf(bad).status, 400);
    const xml = await t.app.inject({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: { ...headers, 'content-type': 'application/xml' },
      payload: '<x/>',
    });
    assert.equal(xml.statusCode, 415);
    assert.equal(problemOf(xml).type, 'https://tools.ietf.org/html/rfc9110#section-15.5.16');
    const huge = await t.app.inject({
      method: 'POST',
      url: '/api/v1/datasets',
      headers,
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    assert.equal(huge.statusCode, 413);
    assert.equal(problemOf(huge).status, 413);
  });

  test('unexpected failures are a plain 500 without internals', async () => {
    // No route of the service throws on purpose: this one is added to an app built beside it, on
    // its configuration and database, before that app is ready.
    const app = await buildApp(t.config, await createServices(t.config, t.database), { logger: false });
    app.get('/boom', async () => {
      throw new Error('secret internals: password=hunter2');
    });
    try {
      const res = await app.inject('/boom');
      assert.equal(res.statusCode, 500);
      const p = problemOf(res);
      assert.equal(p.detail, 'An unexpected error occurred.');
      assert.ok(!res.body.includes('hunter2'));
    } finally {
      await app.close();
    }
  });

  test('the OpenAPI 3.1 document lists every /api/v1 route with its methods', async () => {
    const res = await t.app.inject('/api/v1/openapi.json');
    assert.equal(res.statusCode, 200);
    const doc = res.json<{ openapi: string; paths: Record<string, Record<string, unknown>> }>();
    assert.equal(doc.openapi, '3.1.0');
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    const registered = t.app.routeTable
      .filter((r) => r.includes(' /api/v1/') && !r.endsWith('/openapi.json'))
      // `::` is Fastify's escape of a literal colon (records:load), `:name` a path parameter (with
      // its regex, if any, left out).
      .map((r) =>
        r
          .replace(/(:[A-Za-z]+)\([^)]*\)/g, '$1')
          .replace(/::/g, '\0')
          .replace(/:([A-Za-z]+)/g, '{$1}')
          .replace(/\0/g, ':'),
      );
    assert.ok(registered.length >= 10, registered.join('\n'));
    for (const r of registered) assert.ok(documented.has(r), `${r} is missing from the OpenAPI document`);
    // The console's pages are for people, not part of the API's document.
    assert.ok(t.app.routeTable.some((r) => r.includes(' /console/')));
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.startsWith('/console')),
      [],
    );
  });

  test('/metrics exposes request counters in Prometheus text', async () => {
    await t.app.inject('/healthz');
    const res = await t.app.inject('/metrics');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /dx_api_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  });
});
