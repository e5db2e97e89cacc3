// A fuzz pass over every operation of /api/v1/openapi.json, on both engines: malformed path ids
// (NUL, bad escapes, huge integers, '..', very long), bad query values and page tokens, bodies of
// the wrong type in each property, and broken JSON. Every answer must be below 500, and every
// answer of 400 or more an application/problem+json. Deterministic (a fixed seed) and bounded
// (a few hundred requests per engine).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp, type TestPartner } from '../support/onboarding.js';

/** mulberry32: a small seeded generator, so every run sends the same requests. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const b64 = (value: string) => Buffer.from(value).toString('base64url');
const PATH_VALUES = [
  '%00',
  'x%00y',
  '%ff',
  '%',
  '..',
  '%2e%2e',
  '99999999999999999999',
  '2147483648',
  '-1',
  '1e300',
  'a'.repeat(300),
  '00000000-0000-0000-0000-000000000000',
  '%E2%80%AE',
  "'; drop table datasets; --",
];
const QUERY_VALUES = [
  '%00',
  'a%00b',
  '2147483648',
  '9007199254740993',
  '1e300',
  '-1',
  '0',
  'true',
  '',
  '%ff',
  'x'.repeat(5000),
  b64('{"g":1,"k":["x"]}'),
  b64('{"g":1,"k":[true]}'),
  b64('{"g":"x","k":[1]}'),
  b64('{"g":1e300,"k":[null]}'),
  b64('{'),
  b64('[]'),
  'not-base64!',
];
/** Values of the wrong type (or out of range) for any JSON property. */
const BODY_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  2147483648,
  2 ** 53,
  1e300,
  'a\u0000b',
  '',
  'x'.repeat(70_000),
  [],
  [null],
  {},
  { nested: { deep: [1, 'a'] } },
];
const RAW_BODIES = ['{', '[]', 'null', '"x"', '{"a":', '\u0000', '{"__proto__":{"x":1}}', '1e999'];

interface Operation {
  method: string;
  path: string;
  params: { in: string; name: string }[];
  bodyProperties: string[] | null;
  appJwtOnly: boolean;
}

await forEachDatabase('fuzz over the OpenAPI operations', (target) => {
  let t: Fixture;
  let partner: TestPartner;
  let jwt = '';
  let datasetId = '';
  let operations: Operation[] = [];
  before(async () => {
    t = await startFixture(target, { LOG_LEVEL: 'silent' });
    partner = await onboardApp(t, 'Fuzz partner');
    jwt = await partner.jwt();
    datasetId = await t.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['id'],
    );
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, OpenApiOperation>>;
    }>();
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        bodyProperties:
          op.requestBody === undefined
            ? null
            : Object.keys(op.requestBody.content['application/json']?.schema?.properties ?? {}),
        appJwtOnly: (op.security ?? []).every((s) => 'appJwt' in s) && (op.security ?? []).length > 0,
      })),
    );
    assert.ok(operations.length >= 20, `the document lists the operations (${operations.length})`);
  });
  after(() => t.close());

  void it('no operation answers 500, and every refusal is a problem', { timeout: 600_000 }, async () => {
    const next = random(17);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
    const failures: string[] = [];
    let sent = 0;
    const statuses = new Map<number, number>();
    for (const op of operations) {
      for (let round = 0; round < 14; round++) {
        // Mostly malformed path values; some real ids, so the handlers behind the checks run too.
        let url = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
          round % 3 === 0 && name === 'id' ? datasetId : pick(PATH_VALUES),
        );
        const query = op.params
          .filter((p) => p.in === 'query')
          .filter(() => next() < 0.7)
          .map((p) => `${p.name}=${pick(QUERY_VALUES)}`);
        if (query.length > 0) url += `?${query.join('&')}`;
        let payload: string | undefined;
        if (op.bodyProperties !== null) {
          if (round % 4 === 3) payload = pick(RAW_BODIES);
          else {
            const body: Record<string, unknown> = {};
            for (const name of op.bodyProperties) if (next() < 0.8) body[name] = pick(BODY_VALUES);
            if (next() < 0.2) body[`extra${round}`] = pick(BODY_VALUES);
            payload = JSON.stringify(body);
          }
        }
        const headers: Record<string, string> = {
          authorization: `Bearer ${op.appJwtOnly || round % 7 === 6 ? jwt : t.token}`,
        };
        if (payload !== undefined) headers['content-type'] = 'application/json';
        if (op.params.some((p) => p.in === 'header' && p.name === 'idempotency-key') && next() < 0.3) {
          headers['idempotency-key'] = pick(['', 'k\u0001', 'x'.repeat(300), `key-${round}`]);
        }
        const res = await t.app.inject({
          method: op.method as 'GET',
          url,
          headers,
          ...(payload !== undefined ? { payload } : {}),
        });
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const what = `${op.method} ${url.slice(0, 200)} ${payload?.slice(0, 200) ?? ''}`;
        if (res.statusCode >= 500) failures.push(`${res.statusCode} ${what}: ${res.body.slice(0, 300)}`);
        else if (res.statusCode >= 400) {
          const type = String(res.headers['content-type'] ?? '');
          if (!type.startsWith('application/problem+json')) {
            failures.push(`${res.statusCode} not a problem (${type}) ${what}`);
          }
        }
      }
    }
    assert.ok(sent >= 300, `sent ${sent}`);
    // The pass reached past the checks too: some requests succeeded, others were refused by handlers.
    const seen = [...statuses.keys()].sort();
    assert.ok(seen.some((s) => s < 300) && seen.includes(400) && seen.includes(404), String(seen));
    assert.deepEqual(failures, []);
  });
});

interface OpenApiOperation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
  security?: Record<string, unknown>[];
}
