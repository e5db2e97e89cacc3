// Dataset definitions, tenancy and tags over HTTP, on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import {
  accessToken,
  onboardApp,
  onboardWorkspace,
  ownToken,
  problemOf,
  type TestPartner,
} from '../support/onboarding.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;
const VOTERS = {
  name: 'Voters',
  description: 'Contact list',
  schema: {
    properties: [
      { name: 'voter_id', type: 'integer', required: true },
      { name: 'first_name', type: 'string' },
      { name: 'opted_in', type: 'boolean', required: false },
    ],
    primaryKey: ['voter_id'],
  },
};

await forEachDatabase('datasets', (target) => {
  let t: Fixture;
  let texting: TestPartner;
  let dialer: TestPartner;
  let campaign: Awaited<ReturnType<typeof onboardWorkspace>>;
  let textingToken: string;
  let dialerToken: string;

  before(async () => {
    t = await startFixture(target);
    texting = await onboardApp(t, 'Texting Tool');
    dialer = await onboardApp(t, 'Dialer', 'ES256');
    campaign = await onboardWorkspace(t, 'Campaign', [texting, dialer]);
    textingToken = await accessToken(
      t,
      texting,
      campaign.installations.get(texting.app.id) ?? 0,
      campaign.workspaceKey,
    );
    dialerToken = await accessToken(
      t,
      dialer,
      campaign.installations.get(dialer.app.id) ?? 0,
      campaign.workspaceKey,
    );
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, token: string, payload?: object) =>
    t.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });

  test('defining a dataset answers 201 with the public shape', async () => {
    const res = await call('POST', '/api/v1/datasets', textingToken, VOTERS);
    assert.equal(res.statusCode, 201);
    const d = res.json();
    assert.deepEqual(
      Object.keys(d).sort(),
      [
        'createdBy',
        'createdByWorkspace',
        'datasetSchema',
        'datasetId',
        'datasetTags',
        'dateCreated',
        'dateLastRecordUpdated',
        'description',
        'name',
        'recordCount',
        'schemaVersion',
      ].sort(),
    );
    assert.equal(d.schemaVersion, 1);
    assert.equal(d.name, 'Voters');
    assert.equal(d.description, 'Contact list');
    assert.equal(d.recordCount, 0);
    assert.equal(d.dateLastRecordUpdated, null);
    assert.match(d.dateCreated, TIMESTAMP);
    assert.deepEqual(d.createdByWorkspace, { workspaceId: campaign.workspaceId, displayName: 'Campaign' });
    assert.equal(typeof d.datasetSchema.datasetSchemaId, 'number');
    assert.deepEqual(d.datasetSchema.properties, [
      { name: 'voter_id', type: 'integer', required: true },
      { name: 'first_name', type: 'string', required: false },
      { name: 'opted_in', type: 'boolean', required: false },
    ]);
    assert.deepEqual(d.datasetSchema.primaryKey, ['voter_id']);
    // Without tagIds, every app connected to the workspace is tagged.
    assert.deepEqual(
      d.datasetTags.map((tag: { platformAppId: string }) => tag.platformAppId).sort(),
      [texting.app.id, dialer.app.id].sort(),
    );
    for (const tag of d.datasetTags) {
      assert.equal(tag.datasetId, d.datasetId);
      assert.ok(['Texting Tool', 'Dialer'].includes(tag.name));
      assert.equal(typeof tag.datasetTagId, 'string');
    }
    const fetched = await call('GET', `/api/v1/datasets/${d.datasetId}`, dialerToken);
    assert.equal(fetched.statusCode, 200);
    assert.deepEqual(fetched.json(), d);
  });

  test('list is an envelope of the datasets the installation may see', async () => {
    const res = await call('GET', '/api/v1/datasets', dialerToken);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.metadata.count, body.data.length);
    assert.ok(body.data.some((d: { name: string }) => d.name === 'Voters'));
  });

  test('with tagIds only the creating app and those listed see the dataset; others get 404', async () => {
    const res = await call('POST', '/api/v1/datasets', textingToken, {
      ...VOTERS,
      name: 'Private',
      tagIds: [],
    });
    assert.equal(res.statusCode, 201);
    const id = res.json().datasetId;
    assert.deepEqual(
      res.json().datasetTags.map((x: { platformAppId: string }) => x.platformAppId),
      [texting.app.id],
    );
    const hidden = await call('GET', `/api/v1/datasets/${id}`, dialerToken);
    assert.equal(hidden.statusCode, 404);
    assert.equal(problemOf(hidden).type, 'https://tools.ietf.org/html/rfc9110#section-15.5.5');
    const list = await call('GET', '/api/v1/datasets', dialerToken);
    assert.ok(!list.json().data.some((d: { datasetId: string }) => d.datasetId === id));

    // Tag the dialer in: now it sees it; remove the tag: hidden again.
    const tag = await call('POST', `/api/v1/datasets/${id}/tags`, textingToken, {
      platformAppId: dialer.app.id,
    });
    assert.equal(tag.statusCode, 201);
    assert.equal(tag.json().platformAppId, dialer.app.id);
    assert.equal((await call('GET', `/api/v1/datasets/${id}`, dialerToken)).statusCode, 200);
    const removed = await call(
      'DELETE',
      `/api/v1/datasets/${id}/tags/${tag.json().datasetTagId}`,
      textingToken,
    );
    assert.equal(removed.statusCode, 204);
    assert.equal((await call('GET', `/api/v1/datasets/${id}`, dialerToken)).statusCode, 404);
  });

  test('tags must name apps connected to the workspace', async () => {
    const outsider = await onboardApp(t, 'Outsider');
    const res = await call('POST', '/api/v1/datasets', textingToken, {
      ...VOTERS,
      tagIds: [{ platformAppId: outsider.app.id }],
    });
    assert.equal(res.statusCode, 400);
    assert.ok('tagIds' in problemOf(res).errors);
    const tags = await call('GET', '/api/v1/datasets/tags', textingToken);
    assert.equal(tags.statusCode, 200);
    assert.deepEqual(
      tags
        .json()
        .data.map((a: { appName: string }) => a.appName)
        .sort(),
      ['Dialer', 'Texting Tool'],
    );
  });

  test('another workspace never sees the dataset, even the same app', async () => {
    const created = await call('POST', '/api/v1/datasets', textingToken, { ...VOTERS, name: 'Scoped' });
    const id = created.json().datasetId;
    const ownWorkspaceToken = await ownToken(t, texting);
    for (const [method, payload] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(method, `/api/v1/datasets/${id}`, ownWorkspaceToken, payload);
      assert.equal(res.statusCode, 404, method);
    }
    assert.equal((await call('GET', `/api/v1/datasets/${id}`, textingToken)).statusCode, 200);
  });

  test('PATCH renames, DELETE removes', async () => {
    const id = (await call('POST', '/api/v1/datasets', textingToken, VOTERS)).json().datasetId;
    const patched = await call('PATCH', `/api/v1/datasets/${id}`, textingToken, {
      name: 'Renamed',
      description: 'new',
    });
    assert.equal(patched.statusCode, 200);
    assert.equal(patched.json().name, 'Renamed');
    assert.equal(patched.json().description, 'new');
    const empty = await call('PATCH', `/api/v1/datasets/${id}`, textingToken, {});
    assert.equal(empty.statusCode, 400);
    assert.equal((await call('DELETE', `/api/v1/datasets/${id}`, textingToken)).statusCode, 204);
    assert.equal((await call('GET', `/api/v1/datasets/${id}`, textingToken)).statusCode, 404);
    assert.equal((await call('DELETE', `/api/v1/datasets/${id}`, textingToken)).statusCode, 404);
  });

  test('invalid definitions answer 400 naming each bad field, and create nothing', async () => {
    const before = (await call('GET', '/api/v1/datasets', textingToken)).json().metadata.count;
    const cases: [object, string[]][] = [
      [{ schema: VOTERS.schema }, ['name']],
      [{ name: 'x' }, ['schema']],
      [{ name: 'x', schema: { properties: [] } }, ['schema.properties']],
      [
        { name: 'x', schema: { properties: [{ name: '1abc', type: 'string' }] } },
        ['schema.properties[0].name'],
      ],
      [{ name: 'x', schema: { properties: [{ name: 'a', type: 'uuid' }] } }, ['schema.properties[0].type']],
      [
        {
          name: 'x',
          schema: {
            properties: [
              { name: 'a', type: 'string' },
              { name: 'a', type: 'string' },
            ],
          },
        },
        ['schema.properties[1].name'],
      ],
      [
        { name: 'x', schema: { properties: [{ name: 'a', type: 'string' }], primaryKey: ['b'] } },
        ['schema.primaryKey[0]'],
      ],
      [
        { name: 'x', schema: { properties: [{ name: 'a'.repeat(64), type: 'string' }] } },
        ['schema.properties[0].name'],
      ],
      [
        { name: 'x', schema: { properties: [{ name: 'a', type: 'string', required: 'yes' }] } },
        ['schema.properties[0].required'],
      ],
    ];
    for (const [payload, fields] of cases) {
      const res = await call('POST', '/api/v1/datasets', textingToken, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      const p = problemOf(res);
      for (const f of fields) assert.ok(f in p.errors, `${f} in ${JSON.stringify(p.errors)}`);
    }
    assert.equal((await call('GET', '/api/v1/datasets', textingToken)).json().metadata.count, before);
  });

  test('extended types are accepted, and primary-key properties are required', async () => {
    const res = await call('POST', '/api/v1/datasets', textingToken, {
      name: 'Typed',
      schema: {
        properties: ['string', 'integer', 'boolean', 'number', 'date', 'datetime'].map((type) => ({
          name: `p_${type}`,
          type,
        })),
        primaryKey: ['p_string', 'p_date'],
      },
    });
    assert.equal(res.statusCode, 201);
    const props = res.json().datasetSchema.properties as { name: string; required: boolean }[];
    assert.deepEqual(
      props.filter((p) => p.required).map((p) => p.name),
      ['p_string', 'p_date'],
    );
  });
});
