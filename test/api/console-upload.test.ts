// Loading a file from the console, through HTTP, on SQLite and PostgreSQL: the dataset page's form
// (multipart) makes the same uploadUrl job as the API and sends the browser to the load's page; the
// app sees the load through the API; the audit log names who loaded which file. Refused: a form
// without its CSRF token (or with the token after the file), a viewer, a file over UPLOAD_MAX_BYTES
// (before reading, and while streaming), a mode the dataset does not allow. A bad file is a failed
// load with its row errors, never a 500. The load and the file over the limit run again with the
// files in an S3 bucket (s3rver): the same receiver, through the S3 store's streaming put.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, startFixtureOnS3, type Fixture } from '../support/fixture.js';
import { ConsoleBrowser, csrfOf, signedInMember, unescapeHtml } from '../support/console-browser.js';
import { onboardApp, ownToken, callApi } from '../support/onboarding.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { auditRows } from '../../src/domain/console/audit.js';
import { MULTIPART_OVERHEAD_BYTES } from '../../src/http/routes/console/upload.js';
import type { ConsoleRole } from '../../src/domain/console/roles.js';

/** Small, so a file over it is quick to send. */
const MAX_BYTES = 4096;
const GOOD = ['id,name', '1,Ada', '2,Bo', ''].join('\n');
// Line 3 is bad: id is not an integer.
const BAD = ['id,name', '1,Ada', 'x,Bad', '3,Cy', ''].join('\n');
let counter = 0;

/** The suite on a fixture's store: files on disk, or an S3 bucket (the same route and receiver). */
function uploadSuite(start: () => Promise<Fixture>, full: boolean) {
  let t: Fixture;
  before(async () => {
    t = await start();
  });
  after(() => t.close());
  /** The tests of the route itself, which the store does not change: run once, on disk. */
  const routeTest = (name: string, fn: () => Promise<void>) => {
    if (full) test(name, fn);
  };

  const db = () => consoleDb(t.database.db);

  /** A call to /api/v1 with an app's access token. */
  const api = (token: string, method: string, path: string, body?: unknown) =>
    callApi(t, token, method, path, body);

  /** A workspace with an app, an empty dataset with a key, and a signed-in member of `role`. */
  async function setUp(role: ConsoleRole = 'owner') {
    const app = await onboardApp(t, `Upload App ${++counter}`);
    const token = await ownToken(t, app);
    const created = await api(token, 'POST', '/datasets', {
      name: `Volunteers ${++counter}`,
      schema: {
        properties: [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'string', required: true },
        ],
        primaryKey: ['id'],
      },
    });
    assert.equal(created.status, 201, created.text);
    const { datasetId } = created.json() as { datasetId: string };
    const address = `${role}.${++counter}@example.org`;
    const b = await signedInMember(t, app.workspaceId, role, address, role);
    const page = `/console/workspaces/${app.workspaceId}/datasets/${datasetId}`;
    return { workspaceId: app.workspaceId, token, datasetId, b, address, page, action: `${page}/upload` };
  }

  async function jobsOf(datasetId: string) {
    return t.database.db
      .selectFrom('dataset_jobs')
      .selectAll()
      .where('dataset_id', '=', datasetId)
      .orderBy('created_at')
      .execute();
  }

  /** Polls the job through the app's API until it ends; returns its view. */
  async function ended(token: string, jobId: string) {
    for (let i = 0; ; i++) {
      const job = await api(token, 'GET', `/datasets/jobs/${jobId}`);
      const view = job.json() as { currentStatus: { status: string } };
      if (['Completed', 'Failed', 'Expired'].includes(view.currentStatus.status)) return view;
      assert.ok(i < 400, `job still ${view.currentStatus.status}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  const file = (content: string, fileName = 'volunteers.csv') => ({ fileName, content });

  test('an owner loads a CSV from the dataset page: the same job as the API, the load page, the audit row', async () => {
    const s = await setUp('owner');
    const page = await s.b.get(s.page);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<form[^>]*action="[^"]*\/upload"[^>]*enctype="multipart\/form-data"/);
    // An empty dataset with a key: every mode but none missing; "create" first chosen.
    assert.match(page.body, /<option value="create" selected>/);
    assert.match(page.body, /<option value="upsert"/);
    assert.match(page.body, /Up to 4\.1 kB/);

    const res = await s.b.postMultipart(s.action, [
      ['_csrf', csrfOf(page.body)],
      ['mode', 'create'],
      ['format', 'csv'],
      ['file', file(GOOD, 'volunteers <2026>.csv')],
    ]);
    assert.equal(res.statusCode, 303, res.body);
    const jobs = await jobsOf(s.datasetId);
    assert.equal(jobs.length, 1);
    const job = jobs[0]!;
    assert.equal(res.headers.location, `/console/workspaces/${s.workspaceId}/jobs/${job.id}`);
    // The API's own job type, object key and owner; no installation (a member asked, not an app).
    assert.equal(job.job_type, 'uploadUrl');
    assert.equal(job.upload_type, 'singlerequest');
    assert.equal(job.content_type, 'csv');
    assert.equal(job.mode, 'create');
    assert.equal(job.object_key, `datasets/${s.datasetId}/uploads/${job.id}`);
    assert.equal(job.installation_id, null);

    const view = (await ended(s.token, job.id)) as {
      currentStatus: { status: string; logData: { rowsLoaded: number } };
      statusLog?: { logData?: { message?: string } }[];
    };
    assert.equal(view.currentStatus.status, 'Completed', JSON.stringify(view));
    assert.equal(view.currentStatus.logData.rowsLoaded, 2);

    const load = await s.b.get(res.headers.location);
    assert.equal(load.statusCode, 200);
    const text = unescapeHtml(load.body);
    assert.match(text, new RegExp(`${s.address.replace('.', '\\.')}, from the console`));
    assert.match(text, /Uploading volunteers <2026>\.csv from the console\./);
    assert.match(text, /File received \(\d+ bytes, read as csv\); queued\./);

    const rows = await auditRows(db(), { workspaceId: s.workspaceId, limit: 5 });
    const row = rows.find((r) => r.action === 'dataset.file_loaded');
    assert.ok(row !== undefined, JSON.stringify(rows));
    assert.equal(row.actor, s.address);
    assert.equal(
      row.detail,
      `volunteers <2026>.csv (${GOOD.length} bytes, csv, mode create) into dataset ${s.datasetId}, load ${job.id}`,
    );

    // The dataset now holds records: "create" is no longer offered, "append" is chosen.
    const again = await s.b.get(s.page);
    assert.doesNotMatch(again.body, /<option value="create"/);
    assert.match(again.body, /<option value="append" selected>/);
  });

  routeTest('a bad file is a failed load with its row errors, not a 500', async () => {
    const s = await setUp('admin');
    const page = await s.b.get(s.page);
    const res = await s.b.postMultipart(s.action, [
      ['_csrf', csrfOf(page.body)],
      ['mode', 'create'],
      ['format', 'csv'],
      ['file', file(BAD)],
    ]);
    assert.equal(res.statusCode, 303, res.body);
    const [job] = await jobsOf(s.datasetId);
    const view = await ended(s.token, job!.id);
    assert.equal(view.currentStatus.status, 'Failed');
    const load = await s.b.get(res.headers.location as string);
    assert.equal(load.statusCode, 200);
    assert.match(load.body, /Failed/);
    assert.match(load.body, /<td>3<\/td>/);

    // Not JSON at all, read as JSON: failed too.
    const page2 = await s.b.get(s.page);
    const json = await s.b.postMultipart(s.action, [
      ['_csrf', csrfOf(page2.body)],
      ['mode', 'create'],
      ['format', 'json'],
      ['file', file('this is { not json', 'people.json')],
    ]);
    assert.equal(json.statusCode, 303, json.body);
    const jobs = await jobsOf(s.datasetId);
    assert.equal((await ended(s.token, jobs[1]!.id)).currentStatus.status, 'Failed');
  });

  routeTest(
    'CSRF: no token, a forged one, or the token after the file is refused and nothing is made',
    async () => {
      const s = await setUp('owner');
      const page = await s.b.get(s.page);
      const token = csrfOf(page.body);
      const cases: [string, Parameters<ConsoleBrowser['postMultipart']>[1]][] = [
        [
          'none',
          [
            ['mode', 'create'],
            ['format', 'csv'],
            ['file', file(GOOD)],
          ],
        ],
        [
          'forged',
          [
            ['_csrf', 'x'.repeat(43)],
            ['mode', 'create'],
            ['format', 'csv'],
            ['file', file(GOOD)],
          ],
        ],
        [
          'after the file',
          [
            ['mode', 'create'],
            ['format', 'csv'],
            ['file', file(GOOD)],
            ['_csrf', token],
          ],
        ],
        [
          'no file',
          [
            ['mode', 'create'],
            ['format', 'csv'],
          ],
        ],
      ];
      for (const [name, fields] of cases) {
        const res = await s.b.postMultipart(s.action, fields);
        assert.equal(res.statusCode, 403, `${name}: ${res.body}`);
        assert.match(res.body, /did not come from this console/);
      }
      // Another session's token.
      const other = await signedInMember(t, s.workspaceId, 'owner', `other.${++counter}@example.org`);
      const otherToken = csrfOf((await other.get(s.page)).body);
      const res = await s.b.postMultipart(s.action, [
        ['_csrf', otherToken],
        ['mode', 'create'],
        ['format', 'csv'],
        ['file', file(GOOD)],
      ]);
      assert.equal(res.statusCode, 403);
      // An urlencoded post with a valid token is no file form.
      const plain = await s.b.post(s.action, { _csrf: token, mode: 'create', format: 'csv' });
      assert.equal(plain.statusCode, 400, plain.body);
      // Signed out: refused.
      const stranger = new ConsoleBrowser(() => t.app);
      const anon = await stranger.postMultipart(s.action, [
        ['_csrf', token],
        ['mode', 'create'],
        ['format', 'csv'],
        ['file', file(GOOD)],
      ]);
      assert.equal(anon.statusCode, 401);
      assert.equal((await jobsOf(s.datasetId)).length, 0);
      const rows = await auditRows(db(), { workspaceId: s.workspaceId, limit: 20 });
      assert.equal(rows.filter((r) => r.action === 'dataset.file_loaded').length, 0);
    },
  );

  routeTest('a viewer sees no form and is refused (403) with a valid token', async () => {
    const s = await setUp('viewer');
    const page = await s.b.get(s.page);
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /multipart\/form-data/);
    const res = await s.b.postMultipart(s.action, [
      ['_csrf', csrfOf(page.body)],
      ['mode', 'create'],
      ['format', 'csv'],
      ['file', file(GOOD)],
    ]);
    assert.equal(res.statusCode, 403, res.body);
    assert.match(res.body, /look but not change/);
    assert.equal((await jobsOf(s.datasetId)).length, 0);
  });

  test('a file over UPLOAD_MAX_BYTES is refused with a clear message, before or while it streams', async () => {
    const s = await setUp('owner');
    const token = csrfOf((await s.b.get(s.page)).body);
    // Declared larger than any file may be with its form: refused before a byte is read, no load.
    const huge = await s.b.postMultipart(s.action, [
      ['_csrf', token],
      ['mode', 'create'],
      ['format', 'csv'],
      ['file', file('x'.repeat(MAX_BYTES + MULTIPART_OVERHEAD_BYTES + 1))],
    ]);
    assert.equal(huge.statusCode, 413, huge.body);
    assert.match(huge.body, /larger than/i);
    assert.equal((await jobsOf(s.datasetId)).length, 0);

    // Within the body's allowance but over the file's limit: stopped while it streams, the load
    // ends Failed at once with the same message, and nothing of the file is kept.
    const over = await s.b.postMultipart(s.action, [
      ['_csrf', token],
      ['mode', 'create'],
      ['format', 'csv'],
      ['file', file(`id,name\n${'1,Ada\n'.repeat(MAX_BYTES / 6 + 10)}`)],
    ]);
    assert.equal(over.statusCode, 413, over.body);
    assert.match(over.body, /Too much data/);
    assert.match(over.body, /larger than/i);
    const jobs = await jobsOf(s.datasetId);
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.status, 'Failed');
    assert.equal(await t.services.objects.head(jobs[0]!.object_key!), null);
    // The same form with a small file still works.
    const ok = await s.b.postMultipart(s.action, [
      ['_csrf', token],
      ['mode', 'create'],
      ['format', 'csv'],
      ['file', file(GOOD)],
    ]);
    assert.equal(ok.statusCode, 303, ok.body);
  });

  routeTest(
    'a mode the dataset does not allow, or an unknown one, is refused before any load is made',
    async () => {
      const s = await setUp('owner');
      const token = csrfOf((await s.b.get(s.page)).body);
      const first = await s.b.postMultipart(s.action, [
        ['_csrf', token],
        ['mode', 'create'],
        ['format', 'csv'],
        ['file', file(GOOD)],
      ]);
      assert.equal(first.statusCode, 303);
      await ended(s.token, (await jobsOf(s.datasetId))[0]!.id);
      const again = await s.b.postMultipart(s.action, [
        ['_csrf', token],
        ['mode', 'create'],
        ['format', 'csv'],
        ['file', file(GOOD)],
      ]);
      assert.ok([400, 409].includes(again.statusCode), `${again.statusCode}: ${again.body}`);
      assert.match(again.body, /already holds records/);
      const unknown = await s.b.postMultipart(s.action, [
        ['_csrf', token],
        ['mode', 'merge'],
        ['format', 'csv'],
        ['file', file(GOOD)],
      ]);
      assert.equal(unknown.statusCode, 400);
      assert.equal((await jobsOf(s.datasetId)).length, 1);
      // Another workspace's member cannot reach the dataset.
      const outsider = await setUp('owner');
      const cross = await outsider.b.postMultipart(
        `/console/workspaces/${s.workspaceId}/datasets/${s.datasetId}/upload`,
        [
          ['_csrf', csrfOf((await outsider.b.get(outsider.page)).body)],
          ['mode', 'append'],
          ['format', 'csv'],
          ['file', file(GOOD)],
        ],
      );
      assert.equal(cross.statusCode, 404);
    },
  );
}

await forEachDatabase('console file upload', (target) => {
  uploadSuite(() => startFixture(target, { UPLOAD_MAX_BYTES: String(MAX_BYTES) }), true);
});

await forEachDatabase('console file upload, S3 storage', (target) => {
  uploadSuite(() => startFixtureOnS3(target, { UPLOAD_MAX_BYTES: String(MAX_BYTES) }), false);
});
