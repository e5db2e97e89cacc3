// Input the databases cannot take (NUL characters, integers beyond a column's range) is a 400
// problem on every engine, never a 500, and changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp, ownToken, problemOf, type TestPartner } from '../support/onboarding.js';

await forEachDatabase('malformed input', (target) => {
  let t: Fixture;
  let partner: TestPartner;
  let token: string;
  let datasetId: string;
  before(async () => {
    t = await startFixture(target);
    partner = await onboardApp(t, 'Fuzzer');
    token = await ownToken(t, partner);
    datasetId = await t.defineDataset([{ name: 'name', type: 'string' }], ['name']);
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST', url: string, bearer: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      ...(payload !== undefined
        ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
        : {}),
    });
  const assertRefused = (res: Awaited<ReturnType<typeof call>>, what: string) => {
    assert.equal(res.statusCode, 400, `${what}: ${res.statusCode} ${res.body}`);
    assert.equal(problemOf(res).status, 400);
  };

  test('a NUL character in a path id, a filter value, a name or a URL is a 400', async () => {
    const count = async () => (await call('GET', '/api/v1/datasets', token)).json().metadata.count;
    const before = await count();
    assertRefused(await call('GET', `/api/v1/datasets/${datasetId}%00`, token), 'path id');
    assertRefused(await call('GET', `/api/v1/datasets/jobs/x%00y`, token), 'job id');
    assertRefused(await call('GET', `/api/v1/datasets/${datasetId}/records?name=a%00b`, token), 'filter');
    const named = await call('POST', '/api/v1/datasets', token, {
      name: 'bad\u0000name',
      schema: { properties: [{ name: 'a', type: 'string' }] },
    });
    assertRefused(named, 'dataset name');
    assert.match(problemOf(named).detail, /NUL character/);
    const load = await call('POST', `/api/v1/datasets/${datasetId}/records:load`, token, {
      url: 'https://example.com/a\u0000.csv',
    });
    assertRefused(load, 'records:load URL');
    assert.equal(await count(), before, 'the refused definition created nothing');
  });

  test('an escaped backslash before "u0000" is text, not a NUL', async () => {
    const res = await call('POST', '/api/v1/datasets', token, {
      name: 'back\\u0000slash',
      schema: { properties: [{ name: 'a', type: 'string' }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().name, 'back\\u0000slash');
  });

  test('ids beyond the integer columns are a 400', async () => {
    const jwt = await partner.jwt();
    for (const id of [2147483648, 2 ** 53, 1e20, 1e300]) {
      assertRefused(
        await call('POST', '/api/v1/apps/me/installations', jwt, { workspaceId: id, workspaceKey: 'k' }),
        `workspaceId ${id}`,
      );
      assertRefused(
        await call('POST', '/api/v1/auth/clientToken', jwt, {
          installationId: id,
          workspaceKey: partner.workspaceKey,
        }),
        `installationId ${id}`,
      );
    }
  });
});
