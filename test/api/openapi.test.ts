// The OpenAPI document as a contract: its shape (operation ids, tags, security, problem answers,
// named components), the contract check itself, and a standard generator's named types compiling.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { contractChecked } from '../support/contract.js';
import { PROPERTY_TYPES } from '../../src/domain/datasets/schema.js';
import { PERMISSIONS } from '../../src/domain/identity/access-tokens.js';
import { CONTENT_TYPES, JOB_STATUSES, JOB_TYPES, LOAD_MODES } from '../../src/domain/jobs/status.js';
import { PROBLEM_SOURCES } from '../../src/errors.js';

interface Operation {
  operationId?: string;
  tags?: string[];
  security?: unknown[];
  description?: string;
  parameters?: { name: string; in: string; schema?: { type?: string } }[];
  requestBody?: { required?: boolean; content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface Document {
  openapi: string;
  servers: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}
interface Schema {
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
}

/** The component names clients generate types from: renaming one breaks them (docs/api.md). */
const STABLE_COMPONENTS = [
  'Problem',
  'UserSummary',
  'WorkspaceSummary',
  'Installation',
  'InstallationList',
  'ConnectInstallationRequest',
  'ClientTokenRequest',
  'ClientToken',
  'Me',
  'Dataset',
  'DatasetList',
  'DatasetSchema',
  'DatasetProperty',
  'DatasetTag',
  'NewDataset',
  'NewDatasetSchema',
  'NewDatasetProperty',
  'DatasetUpdate',
  'AppRef',
  'ConnectedApp',
  'ConnectedAppList',
  'UploadUrlRequest',
  'RecordsLoadRequest',
  'LoadJobStarted',
  'UploadReceived',
  'Job',
  'JobList',
  'JobStatus',
  'JobStatusList',
  'JobLogData',
  'JobErrorData',
  'JobError',
  'JobErrorPage',
  'JobProgress',
  'DatasetRecord',
  'RecordPage',
  'RecordsRetrieveRequest',
  'DownloadLink',
  'SetWebhookRequest',
  'Webhook',
  'WebhookWithSecret',
  'WebhookDelivery',
  'WebhookDeliveryPage',
  'HealthStatus',
  'StorageNotificationResult',
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

await onDatabase('sqlite', 'openapi', (target) => {
  let t: Fixture;
  let doc: Document;
  before(async () => {
    t = await startFixture(target);
    const res = await t.app.inject('/api/v1/openapi.json');
    assert.equal(res.statusCode, 200);
    doc = res.json<Document>();
  });
  after(() => t.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
    );

  test('every operation has a unique operationId, declared tags and security', () => {
    const ids = new Set<string>();
    const tags = new Set(doc.tags.filter((tag) => tag.description !== undefined).map((tag) => tag.name));
    for (const { where, op } of operations()) {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, `${where}: operationId`);
      assert.ok(!ids.has(op.operationId ?? ''), `${where}: operationId ${op.operationId} twice`);
      ids.add(op.operationId ?? '');
      assert.ok((op.tags ?? []).length > 0, `${where}: tags`);
      for (const tag of op.tags ?? []) assert.ok(tags.has(tag), `${where}: tag ${tag} is not declared`);
      assert.ok(Array.isArray(op.security), `${where}: security`);
      if (op.security.length === 0) assert.ok((op.description ?? '').length > 0, `${where}: why no security`);
    }
    assert.ok(ids.size >= 28, [...ids].join(' '));
  });

  test('every error is application/problem+json with the Problem schema', () => {
    for (const { where, op } of operations()) {
      assert.ok('400' in op.responses, `${where}: every request can be malformed (400)`);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        assert.deepEqual(
          response.content,
          { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
          `${where} ${status}`,
        );
      }
    }
  });

  test('resources are named components, referenced with $ref; no component is left unused', () => {
    // The S3 webhook's answer is listed only while the webhook is on (STORAGE=s3 with a token).
    for (const name of STABLE_COMPONENTS.filter((n) => n !== 'StorageNotificationResult'))
      assert.ok(name in doc.components.schemas, `component ${name}`);
    const text = JSON.stringify(doc.paths);
    const all = JSON.stringify(doc);
    for (const name of Object.keys(doc.components.schemas)) {
      assert.ok(all.includes(`"#/components/schemas/${name}"`), `${name} is never referenced`);
    }
    assert.ok(text.includes('"#/components/schemas/Dataset"'));
    assert.equal(doc.servers[0]?.url, t.config.publicUrl);
  });

  test('a route that is off leaves nothing: the S3 webhook under STORAGE=local', () => {
    assert.equal(t.config.storage.kind, 'local');
    assert.ok(!('/api/v1/storage/notifications' in doc.paths));
    assert.ok(!('StorageNotificationResult' in doc.components.schemas));
    const schemes = Object.keys(doc.components.securitySchemes ?? {}).sort();
    assert.deepEqual(schemes, ['accessToken', 'appJwt']);
    assert.ok(!doc.tags.some((tag) => tag.name === 'storage'));
  });

  test('closed sets are enums, each from its one source', () => {
    const schemas = doc.components.schemas as Record<string, Schema>;
    const enumOf = (schema: Schema | undefined, ...path: string[]) => {
      let at = schema;
      for (const key of path) at = key === '[]' ? at?.items : at?.properties?.[key];
      return at?.enum ?? at?.anyOf?.find((s) => s.enum !== undefined)?.enum;
    };
    assert.deepEqual(enumOf(schemas.DatasetProperty, 'type'), PROPERTY_TYPES);
    assert.deepEqual(enumOf(schemas.NewDatasetProperty, 'type'), PROPERTY_TYPES);
    assert.deepEqual(enumOf(schemas.Job, 'jobType'), JOB_TYPES);
    assert.deepEqual(enumOf(schemas.Job, 'mode'), LOAD_MODES);
    assert.deepEqual(enumOf(schemas.Job, 'contentType'), CONTENT_TYPES);
    assert.deepEqual(enumOf(schemas.JobStatus, 'status'), JOB_STATUSES);
    assert.deepEqual(enumOf(schemas.Problem, 'source'), PROBLEM_SOURCES);
    assert.deepEqual(enumOf(schemas.Me, 'permissions', '[]'), PERMISSIONS);
    const requested = schemas.ClientTokenRequest?.properties?.permissions?.anyOf?.[0];
    assert.deepEqual(enumOf(requested, '[]'), PERMISSIONS);
  });

  test('the served document lints clean with Redocly; the only ambiguous paths are the accepted ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dx-openapi-lint-'));
    const pkg = createRequire(import.meta.url).resolve('@redocly/cli/package.json');
    const cli = join(dirname(pkg), 'bin', 'cli.js');
    const lint = async (config: string) => {
      const { stdout } = await promisify(execFile)(process.execPath, [
        cli,
        'lint',
        '--config',
        config,
        '--format',
        'json',
        join(dir, 'served.json'),
      ]);
      return JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; location: { pointer: string }[] }[];
      };
    };
    try {
      writeFileSync(join(dir, 'served.json'), JSON.stringify(doc));
      const project = fileURLToPath(new URL('../../../redocly.yaml', import.meta.url));
      const clean = await lint(project);
      assert.equal(clean.totals.errors + clean.totals.warnings, 0, JSON.stringify(clean.problems));
      // The one rule the project turns off finds only DXAPI's paths (the reason is in redocly.yaml).
      writeFileSync(
        join(dir, 'strict.yaml'),
        `extends:\n  - ${project}\nrules:\n  no-ambiguous-paths: warn\ntelemetry: off\n`,
      );
      const strict = await lint(join(dir, 'strict.yaml'));
      assert.deepEqual(
        strict.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`).sort(),
        [
          '/paths/~1api~1v1~1datasets~1jobs~1{jobId}',
          '/paths/~1api~1v1~1datasets~1{id}~1changes',
          '/paths/~1api~1v1~1datasets~1{id}~1jobs',
          '/paths/~1api~1v1~1datasets~1{id}~1records',
          '/paths/~1api~1v1~1datasets~1{id}~1records:retrieve',
        ].map((pointer) => `no-ambiguous-paths #${pointer}`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('uploads, downloads, query parameters and record filters are described', () => {
    const upload = doc.paths['/uploads/{jobId}']?.put;
    assert.ok(upload);
    assert.deepEqual(Object.keys(upload.requestBody?.content ?? {}).sort(), [
      'application/gzip',
      'application/json',
      'application/octet-stream',
      'application/x-ndjson',
      'text/csv',
      'text/tab-separated-values',
    ]);
    assert.equal(upload.requestBody?.required, false);
    const names = (op: Operation | undefined) => (op?.parameters ?? []).map((p) => `${p.in} ${p.name}`);
    assert.deepEqual(
      names(upload).filter((n) => n.startsWith('query')),
      ['query expires', 'query signature'],
    );
    assert.deepEqual(Object.keys(upload.responses).slice(0, 2), ['200', '308']);
    const download = doc.paths['/downloads/{datasetId}/{file}']?.get;
    assert.deepEqual(Object.keys(download?.responses['200']?.content ?? {}), [
      'text/csv',
      'application/x-ndjson',
    ]);
    const records = doc.paths['/api/v1/datasets/{id}/records']?.get;
    const typeOf = (op: Operation | undefined, name: string) =>
      op?.parameters?.find((p) => p.name === name)?.schema?.type;
    assert.equal(typeOf(records, 'pageSize'), 'integer');
    assert.equal(typeOf(records, 'filters'), 'object');
    const uploadUrl = doc.paths['/api/v1/datasets/{id}/uploadUrl']?.post;
    assert.equal(typeOf(uploadUrl, 'maxBadRecords'), 'integer');
    assert.equal(typeOf(uploadUrl, 'dryRun'), 'boolean');
    assert.equal(doc.paths['/api/v1/datasets/{id}/records:retrieve']?.post?.requestBody?.required, false);
    for (const path of ['/healthz', '/readyz', '/metrics']) assert.ok(doc.paths[path]?.get, path);
  });

  test('answers are held to the document as the suites run', async () => {
    const before = contractChecked().checked;
    await t.api('GET', '/datasets');
    await t.app.inject('/metrics');
    assert.equal(contractChecked().checked, before + 2);
    assert.deepEqual(contractChecked().violations, []);
  });

  test('openapi-typescript generates named types that compile', async () => {
    const generated = astToString(await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0]));
    const dir = mkdtempSync(join(tmpdir(), 'dx-openapi-types-'));
    try {
      writeFileSync(join(dir, 'schema.ts'), generated);
      writeFileSync(
        join(dir, 'use.ts'),
        [
          "import type { components, operations } from './schema.js';",
          "type Schemas = components['schemas'];",
          "const dataset: Schemas['Dataset'] = {} as Schemas['Dataset'];",
          'const key: string[] = dataset.datasetSchema.primaryKey;',
          "const job: Schemas['Job']['currentStatus']['status'] = 'Completed';",
          "const problem: Schemas['Problem'] = { type: 't', title: 'T', status: 400, code: 'dataset_not_empty', detail: 'd', errors: {}, source: 'api', traceId: 'x' };",
          "type Created = operations['createDataset']['responses'][201]['content']['application/json'];",
          'const created: Created = dataset;',
          "type Page = operations['listRecords']['parameters']['query'];",
          'const page: Page = { pageSize: 10 };',
          '// @ts-expect-error: a property type the server refuses does not compile',
          "const bad: Schemas['NewDatasetProperty'] = { name: 'n', type: 'int' };",
          'export { key, job, problem, created, page, bad };',
        ].join('\n'),
      );
      const program = ts.createProgram([join(dir, 'use.ts')], {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        skipLibCheck: true,
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      assert.deepEqual(diagnostics, []);
      assert.match(generated, /Dataset: \{/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
