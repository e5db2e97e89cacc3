// Machine-readable error codes: every problem carries a `code` from the one catalogue
// (ERROR_CODES), the OpenAPI document lists them, docs/api.md documents them in one table, and the
// client reads them; over HTTP on both engines.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DxClient, isDxProblem, type ErrorCode } from '@dataset-exchange/client';
import { ERROR_CODES, ERROR_KINDS } from '../../src/errors.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { putFile, requestUpload, uploadAndWait } from '../support/loading.js';
import { onboardApp, problemOf, type TestPartner } from '../support/onboarding.js';

test('docs/api.md lists every code of the catalogue once, with its status', () => {
  const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  const section = doc.slice(
    doc.indexOf('### Error codes'),
    doc.indexOf('\n## ', doc.indexOf('### Error codes')),
  );
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
  const catalogue = Object.entries(ERROR_CODES).map(([code, { kind }]) => [code, ERROR_KINDS[kind].status]);
  assert.deepEqual([...rows].sort(), [...catalogue].sort());
});

await forEachDatabase('error codes', (target) => {
  let t: Fixture;
  let partner: TestPartner;
  before(async () => {
    t = await startFixture(target);
    partner = await onboardApp(t, 'Error Codes', 'RS256');
  });
  after(() => t.close());

  const call = (
    method: 'GET' | 'POST',
    url: string,
    payload?: string | object,
    headers: Record<string, string> = {},
  ) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${t.token}`, ...headers },
      ...(payload !== undefined ? { payload } : {}),
    });
  const codeOf = async (res: Awaited<ReturnType<typeof call>> | Response) => {
    if (res instanceof Response) return ((await res.json()) as { code: string }).code;
    return problemOf(res).code;
  };

  test('the served document lists the codes as the Problem.code enum', async () => {
    const doc = (await t.app.inject('/api/v1/openapi.json')).json<{
      components: { schemas: { Problem: { properties: { code: { enum: string[] } }; required: string[] } } };
    }>();
    const problem = doc.components.schemas.Problem;
    assert.deepEqual(problem.properties.code.enum, Object.keys(ERROR_CODES));
    assert.ok(problem.required.includes('code'));
  });

  test('each case a client acts on has its own code; others have their status’s general one', async () => {
    const id = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    await uploadAndWait(t, id, 'id\n1\n');
    const cases: [string, Promise<string>][] = [
      ['dataset_not_empty', codeOf(await call('POST', `/datasets/${id}/uploadUrl`, { contentType: 'csv' }))],
      ['dataset_not_found', codeOf(await call('GET', '/datasets/00000000-0000-4000-8000-000000000000'))],
      ['job_not_found', codeOf(await call('GET', '/datasets/jobs/00000000-0000-4000-8000-000000000000'))],
      ['authorization_missing', codeOf(await t.app.inject({ url: `/api/v1/datasets/${id}` }))],
      [
        'access_token_invalid',
        codeOf(await call('GET', `/datasets/${id}`, undefined, { authorization: 'Bearer nope' })),
      ],
      ['invalid_request', codeOf(await call('POST', '/datasets', { name: 1 }))],
      [
        'invalid_json',
        codeOf(await call('POST', '/datasets', '{"name":', { 'content-type': 'application/json' })),
      ],
      [
        'unsupported_media_type',
        codeOf(await call('POST', '/datasets', 'x', { 'content-type': 'text/plain' })),
      ],
      ['page_token_invalid', codeOf(await call('GET', `/datasets/${id}/jobs?pageToken=nonsense`))],
      ['not_found', codeOf(await call('GET', '/nowhere'))],
    ];
    const upload = await requestUpload(t, id, { mode: 'replace' });
    assert.equal((await putFile(upload.url, 'id\n2\n')).status, 200);
    cases.push(['upload_url_used', codeOf(await putFile(upload.url, 'id\n3\n'))]);
    cases.push([
      'signed_url_invalid',
      codeOf(await putFile(upload.url.replace(/signature=[^&]+/, 'signature=x'), 'id\n')),
    ]);
    const wrongKey = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/clientToken',
      headers: { authorization: `Bearer ${await partner.jwt()}` },
      payload: {
        tokenType: 'appInstallation',
        installationId: partner.installationId,
        workspaceKey: 'wsk_wrong',
      },
    });
    cases.push(['workspace_key_mismatch', codeOf(wrongKey)]);
    const key = { 'idempotency-key': `k-${Date.now()}` };
    const body = (name: string) => ({ name, schema: { properties: [{ name: 'id', type: 'integer' }] } });
    assert.equal((await call('POST', '/datasets', body('a'), key)).statusCode, 201);
    cases.push(['idempotency_key_reused', codeOf(await call('POST', '/datasets', body('b'), key))]);
    for (const [expected, got] of cases) assert.equal(await got, expected);
  });

  test('the client exposes the code and matches on it', async () => {
    const id = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    await uploadAndWait(t, id, 'id\n1\n');
    const dx = new DxClient({ baseUrl: t.baseUrl, accessToken: t.token });
    const err: unknown = await dx.upload(id, { data: 'id\n2\n' }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isDxProblem(err, 'dataset_not_empty'), String(err));
    const code: ErrorCode | (string & {}) | undefined = err.code;
    assert.equal(code, 'dataset_not_empty');
    assert.equal(isDxProblem(err, 409), true);
    assert.equal(isDxProblem(err, 'upload_url_used'), false);
  });
});
