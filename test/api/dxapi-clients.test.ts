// What existing DXAPI clients send and read, over HTTP on both engines: the requests and checks of
// the published Python client (a JWT as PyJWT signs it, `Content-Type: application/json` on every
// request, `installationId` as digits, nested installation contexts, `movementAppId`, `tag_ids`,
// body-less records:retrieve), so a partner switches by changing the base URL only.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp, onboardWorkspace, problemOf, type TestPartner } from '../support/onboarding.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { connectInstallation } from '../../src/domain/identity/installations.js';
import { nowSeconds } from '../../src/lib/time.js';
import { expireUploads } from '../../src/domain/jobs/uploads.js';
import { requestUpload, uploadAndWait } from '../support/loading.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The app JWT as the Python client signs it: no kid, its own audience and an extra app claim. */
async function pythonClientJwt(partner: TestPartner): Promise<string> {
  const now = nowSeconds();
  return new SignJWT({ MovementAppId: partner.app.id })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(partner.app.id)
    .setAudience('movementconsole')
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 3600)
    .sign(createPrivateKey(partner.privateKeyPem));
}

await forEachDatabase('DXAPI clients', (target) => {
  let t: Fixture;
  let partner: TestPartner;
  let other: TestPartner;
  before(async () => {
    t = await startFixture(target);
    partner = await onboardApp(t, 'Texting Tool', 'RS256');
    other = await onboardApp(t, 'Dialer', 'RS256');
    await connectInstallation(t.database.db, other.app.id, partner.workspaceId);
  });
  after(() => t.close());

  // Every request of the client carries these, GETs included.
  const call = (method: 'GET' | 'POST', url: string, bearer: string, payload?: object) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        'user-agent': 'DX API Client v0.1.0',
      },
      ...(payload !== undefined ? { payload } : {}),
    });
  const token = async (bearer: string, body: object) => {
    const res = await call('POST', '/auth/clientToken', bearer, body);
    return { res, token: res.statusCode === 200 ? res.json<{ token: string; expiresAt: string }>() : null };
  };

  test('installations carry movementAppId; /auth/me carries appId, dateTermsAccepted, workspace.type', async () => {
    const jwt = await pythonClientJwt(partner);
    const list = await call('GET', '/apps/me/installations', jwt);
    assert.equal(list.statusCode, 200, list.body);
    const [inst] = list.json<{ data: Record<string, unknown>[] }>().data;
    assert.equal(inst?.movementAppId, partner.app.id);
    assert.equal(inst?.platformAppId, partner.app.id);
    assert.match(String(inst?.movementAppId), UUID);
    const me = await call('GET', '/auth/me', jwt);
    assert.equal(me.statusCode, 200, me.body);
    const body = me.json<Record<string, unknown> & { workspace: Record<string, unknown> }>();
    assert.equal(body.appId, partner.app.id);
    assert.equal(body.dateTermsAccepted, null);
    assert.equal(body.workspace.type, 'Organization');
    assert.equal(typeof body.userId, 'number');
    assert.ok(Array.isArray(body.permissions));
  });

  test('clientToken takes installationId as digits, and absent or null tokenType and permissions', async () => {
    const jwt = await pythonClientJwt(partner);
    const asDigits = await token(jwt, {
      tokenType: 'appInstallation',
      workspaceKey: partner.workspaceKey,
      installationId: String(partner.installationId),
      permissions: [],
    });
    assert.equal(asDigits.res.statusCode, 200, asDigits.res.body);
    const bare = await token(jwt, {
      workspaceKey: partner.workspaceKey,
      installationId: partner.installationId,
      tokenType: null,
      permissions: null,
    });
    assert.equal(bare.res.statusCode, 200, bare.res.body);
    const me = await call('GET', '/auth/me', bare.token?.token ?? '');
    assert.deepEqual(me.json<{ permissions: string[] }>().permissions, ['datasets:read', 'datasets:write']);
    for (const installationId of ['04x', '', '99999999999', '0', -1, 2147483648]) {
      const bad = await token(jwt, { workspaceKey: partner.workspaceKey, installationId });
      assert.equal(bad.res.statusCode, 400, `${JSON.stringify(installationId)}: ${bad.res.body}`);
      assert.ok('installationId' in problemOf(bad.res).errors, bad.res.body);
    }
  });

  test('an access token opens a nested context of its own installation, never wider', async () => {
    const jwt = await pythonClientJwt(partner);
    const body = { tokenType: 'appInstallation', workspaceKey: partner.workspaceKey, permissions: [] };
    const outer = await token(jwt, { ...body, installationId: String(partner.installationId) });
    assert.ok(outer.token !== null);
    const nested = await token(outer.token.token, {
      ...body,
      installationId: String(partner.installationId),
    });
    assert.equal(nested.res.statusCode, 200, nested.res.body);
    assert.ok(nested.token !== null);
    assert.notEqual(nested.token.token, outer.token.token);
    assert.ok(nested.token.expiresAt <= outer.token.expiresAt, 'expires no later than the calling token');
    assert.equal((await call('GET', '/datasets', nested.token.token)).statusCode, 200);
    // A read-only token cannot mint a writer.
    const reader = await token(jwt, {
      ...body,
      installationId: partner.installationId,
      permissions: ['datasets:read'],
    });
    assert.ok(reader.token !== null);
    const widened = await token(reader.token.token, {
      ...body,
      installationId: partner.installationId,
      permissions: ['datasets:write'],
    });
    assert.equal(widened.res.statusCode, 403, widened.res.body);
    const narrow = await token(reader.token.token, { ...body, installationId: partner.installationId });
    assert.deepEqual(
      (await call('GET', '/auth/me', narrow.token?.token ?? '')).json<{ permissions: string[] }>()
        .permissions,
      ['datasets:read'],
    );
    // Another installation, even of the same app, and a wrong key are refused.
    const ws = await onboardWorkspace(t, 'Campaign B', [partner]);
    const elsewhere = await token(outer.token.token, {
      ...body,
      workspaceKey: ws.workspaceKey,
      installationId: ws.installations.get(partner.app.id),
    });
    assert.equal(elsewhere.res.statusCode, 403, elsewhere.res.body);
    const wrongKey = await token(outer.token.token, {
      ...body,
      workspaceKey: 'wsk_wrong',
      installationId: partner.installationId,
    });
    assert.equal(wrongKey.res.statusCode, 403);
  });

  test('tags carry movementAppId and are chosen by it; no dataset is stored behind a refusal', async () => {
    const jwt = await pythonClientJwt(partner);
    const { token: issued } = await token(jwt, {
      tokenType: 'appInstallation',
      workspaceKey: partner.workspaceKey,
      installationId: String(partner.installationId),
      permissions: [],
    });
    assert.ok(issued !== null);
    const bearer = issued.token;
    const tags = await call('GET', '/datasets/tags', bearer);
    const candidates = tags.json<{ data: { movementAppId: string; platformAppId: string }[] }>().data;
    assert.deepEqual(candidates.map((c) => c.movementAppId).sort(), [partner.app.id, other.app.id].sort());
    const schema = {
      primaryKey: ['my_van_id'],
      properties: [
        { name: 'my_van_id', type: 'string', required: true },
        { name: 'first_name', type: 'string', required: false },
      ],
    };
    const count = async () =>
      (await call('GET', '/datasets', bearer)).json<{ metadata: { count: number } }>().metadata.count;
    const before = await count();
    // The sync client sends tagIds, the async one tag_ids; both name apps by movementAppId.
    for (const key of ['tagIds', 'tag_ids']) {
      const res = await call('POST', '/datasets', bearer, {
        name: `Tagged by ${key}`,
        description: 'A test tagged dataset',
        schema,
        [key]: [{ movementAppId: other.app.id }],
      });
      assert.equal(res.statusCode, 201, res.body);
      const ds = res.json<{ datasetId: string; datasetTags: Record<string, string>[] }>();
      assert.match(ds.datasetId, UUID);
      for (const tag of ds.datasetTags) {
        assert.match(tag.datasetTagId ?? '', UUID);
        assert.equal(tag.movementAppId, tag.platformAppId);
        assert.match(tag.movementAppId ?? '', UUID);
      }
      assert.deepEqual(
        ds.datasetTags.map((tg) => tg.movementAppId).sort(),
        [partner.app.id, other.app.id].sort(),
      );
    }
    for (const tagIds of [
      [{ movementAppId: other.app.id, platformAppId: partner.app.id }],
      [{}],
      [{ movementAppId: 'nope' }],
    ]) {
      const bad = await call('POST', '/datasets', bearer, {
        name: 'Refused',
        description: '',
        schema,
        tagIds,
      });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.match(problemOf(bad).type, /rfc9110/);
    }
    assert.equal(await count(), before + 2, 'the refused requests stored nothing');
    // A later tag names the app by movementAppId too.
    const untagged = await call('POST', '/datasets', bearer, {
      name: 'Mine',
      description: '',
      schema,
      tagIds: [],
    });
    const id = untagged.json<{ datasetId: string }>().datasetId;
    const added = await call('POST', `/datasets/${id}/tags`, bearer, { movementAppId: other.app.id });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(added.json<{ movementAppId: string }>().movementAppId, other.app.id);
  });

  test('a workspace made as a Campaign says so on /auth/me', async () => {
    const { workspace, workspaceKey } = await createWorkspace(t.database.db, {
      displayName: 'Campaign HQ',
      type: 'Campaign',
    });
    const inst = await connectInstallation(t.database.db, partner.app.id, workspace.id);
    const { token: issued } = await token(await pythonClientJwt(partner), {
      workspaceKey,
      installationId: String(inst.id),
    });
    const me = await call('GET', '/auth/me', issued?.token ?? '');
    assert.deepEqual(me.json<{ workspace: object }>().workspace, {
      workspaceId: workspace.id,
      displayName: 'Campaign HQ',
      type: 'Campaign',
    });
  });

  test('a body-less records:retrieve means CSV, even with a JSON Content-Type', async () => {
    const id = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
      const res = await fetch(`${t.baseUrl}/api/v1/datasets/${id}/records:retrieve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, ...headers },
      });
      assert.equal(res.status, 200, await res.clone().text());
      const { url } = (await res.json()) as { url: string };
      assert.match(new URL(url).pathname, /\.csv$/);
      const file = await fetch(url, { headers: { authorization: `Bearer ${t.token}`, ...headers } });
      assert.equal(file.status, 200);
      assert.equal(await file.text(), 'id\r\n');
    }
    // A body that is there must still be valid.
    const bad = await t.api('POST', `/datasets/${id}/records:retrieve`, { contentType: 'xml' });
    assert.equal(bad.status, 400);
  });

  // MIG's published example polls logs:current until Completed or UnknownError.
  const dxapiEnds = ['Completed', 'UnknownError'];
  type Entry = {
    datasetJobStatusName: string;
    status: string;
    datasetJobStatusCode: number;
    logData: { message: string } | null;
    errorData: { errorCount: number } | null;
  };

  test('a failed job ends as UnknownError for DXAPI clients, its own status and reason beside it', async () => {
    const id = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    const job = await uploadAndWait(t, id, 'id\n1\nnot-a-number\n');
    assert.equal(job.currentStatus.status, 'Failed');
    const read = await call('GET', `/datasets/jobs/${job.datasetJobId}`, t.token);
    const body = read.json<{ currentStatus: Entry } & Record<string, unknown>>();
    assert.equal(body.currentStatus.datasetJobStatusName, 'UnknownError');
    assert.equal(body.currentStatus.datasetJobStatusCode, 5);
    assert.equal(body.currentStatus.errorData?.errorCount, 1);
    assert.ok((body.currentStatus.logData?.message ?? '').length > 0, JSON.stringify(body.currentStatus));
    // DXAPI's job tree, as it shows a job without a parent or children.
    assert.equal(body['datasetParentJobId'], null);
    assert.deepEqual(body['children'], []);
    assert.equal(body['allChildrenSucceeded'], true);
    const current = await call('GET', `/datasets/jobs/${job.datasetJobId}/logs:current`, t.token);
    assert.ok(dxapiEnds.includes(current.json<Entry>().datasetJobStatusName));
    assert.equal(current.json<Entry>().status, 'Failed');
    const logs = await call('GET', `/datasets/jobs/${job.datasetJobId}/logs`, t.token);
    const names = logs.json<{ data: Entry[] }>().data.map((e) => [e.status, e.datasetJobStatusName]);
    assert.deepEqual(names.at(-1), ['Failed', 'UnknownError']);
    assert.ok(
      names.slice(0, -1).every(([own, dxapi]) => own === dxapi),
      JSON.stringify(names),
    );
    const list = await call('GET', `/datasets/${id}/jobs`, t.token);
    const listed = list.json<{ data: { currentStatus: Entry }[] }>().data[0]?.currentStatus;
    assert.equal(listed?.datasetJobStatusName, 'UnknownError');
  });

  test('an expired upload ends as UnknownError too; a completed one as Completed', async () => {
    const id = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    const upload = await requestUpload(t, id);
    await expireUploads({ db: t.database.db, objects: t.services.objects }, Date.now() + 3601_000);
    const current = await call('GET', `/datasets/jobs/${upload.jobId}/logs:current`, t.token);
    assert.equal(current.json<Entry>().datasetJobStatusName, 'UnknownError');
    assert.equal(current.json<Entry>().status, 'Expired');
    assert.equal(current.json<Entry>().datasetJobStatusCode, 6);
    const done = await uploadAndWait(t, id, 'id\n1\n');
    const read = await call('GET', `/datasets/jobs/${done.datasetJobId}/logs:current`, t.token);
    assert.equal(read.json<Entry>().datasetJobStatusName, 'Completed');
    assert.equal(read.json<Entry>().status, 'Completed');
  });
});
