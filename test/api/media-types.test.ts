// Every JSON endpoint takes JSON only: each operation the OpenAPI document gives a JSON body
// answers 415 (a problem) for every other media type, text/plain included, on both engines; an
// empty JSON body stays "no body" (DXAPI clients send the header on every request).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp, problemOf, type TestPartner } from '../support/onboarding.js';

interface Operation {
  requestBody?: { content: Record<string, unknown> };
  security?: Record<string, string[]>[];
}
type Document = { paths: Record<string, Record<string, Operation>> };

const NOT_JSON = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/xml',
  'text/csv',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
];

await forEachDatabase('JSON media types', (target) => {
  let t: Fixture;
  let partner: TestPartner;
  let datasetId: string;
  before(async () => {
    t = await startFixture(target);
    partner = await onboardApp(t, 'Media Types', 'RS256');
    datasetId = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
  });
  after(() => t.close());

  /** Every operation whose body is JSON, with a bearer its security accepts. */
  const jsonOperations = async () => {
    const doc = (await t.app.inject('/api/v1/openapi.json')).json<Document>();
    const ops: { method: string; url: string; bearer: string }[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        // Upload URLs take files (JSON among them) and answer 415 for types of their own.
        if (!path.startsWith('/api/v1/') || op.requestBody?.content['application/json'] === undefined)
          continue;
        const appJwtOnly = op.security?.every((s) => 'appJwt' in s) ?? false;
        ops.push({
          method: method.toUpperCase(),
          url: path.replace('{id}', datasetId),
          bearer: appJwtOnly ? await partner.jwt() : t.token,
        });
      }
    }
    return ops;
  };

  test('every JSON endpoint answers 415 for every other media type', async () => {
    const ops = await jsonOperations();
    // The ones the outside clients tripped on are among them.
    for (const path of ['/datasets', '/uploadUrl', '/records:load'])
      assert.ok(
        ops.some((o) => o.url.endsWith(path)),
        path,
      );
    for (const op of ops) {
      for (const type of NOT_JSON) {
        const res = await t.app.inject({
          method: op.method as 'POST',
          url: op.url,
          headers: { authorization: `Bearer ${op.bearer}`, 'content-type': type },
          payload: '{"name":"x"}',
        });
        assert.equal(res.statusCode, 415, `${op.method} ${op.url} ${type}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        assert.equal(problemOf(res).status, 415);
      }
    }
  });

  test('JSON still passes, and an empty body is no body whatever its type', async () => {
    const created = await t.api('POST', '/datasets', {
      name: 'media',
      schema: { properties: [{ name: 'id', type: 'integer' }], primaryKey: ['id'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const upload = await t.app.inject({
      method: 'POST',
      url: `/api/v1/datasets/${datasetId}/uploadUrl`,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json; charset=utf-8' },
      payload: '{"contentType":"csv"}',
    });
    assert.equal(upload.statusCode, 202, upload.body);
    const retrieve = await t.app.inject({
      method: 'POST',
      url: `/api/v1/datasets/${datasetId}/records:retrieve`,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    });
    assert.equal(retrieve.statusCode, 200, retrieve.body);
    // No body at all: nothing to refuse, whatever the header says.
    const bodyless = await t.app.inject({
      method: 'POST',
      url: `/api/v1/datasets/${datasetId}/records:retrieve`,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'text/plain' },
    });
    assert.equal(bodyless.statusCode, 200, bodyless.body);
  });
});
