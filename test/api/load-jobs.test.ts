// Load jobs end to end: records:load and its SSRF guard, defects, modes, atomic replace, re-runs.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { allRecords, putFile, requestUpload, uploadAndWait } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string', required: true },
  { name: 'ok', type: 'boolean' },
];
const rows = (n: number, label: string) =>
  `id,name,ok\n${Array.from({ length: n }, (_, i) => `${i + 1},${label},true`).join('\n')}\n`;

await forEachDatabase('load jobs', (target) => {
  let h: Fixture;
  let files: Server;
  let filesUrl = '';
  before(async () => {
    h = await startFixture(target, { LOAD_URL_ALLOWLIST: '127.0.0.1/32' });
    files = createServer((req, res) => {
      if (req.url?.startsWith('/good.csv')) {
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.end(rows(3, 'remote'));
      } else if (req.url === '/data.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify([{ id: 1, name: 'j', ok: false }]));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => files.close(resolve));
    await h.close();
  });

  const load = async (id: string, url: string, mode = 'create') => {
    const res = await h.api<{ jobId: string; url: string }>(
      'POST',
      `/datasets/${id}/records:load?mode=${mode}`,
      { url },
    );
    assert.equal(res.status, 202, res.text);
    assert.equal(res.json.url, url);
    return h.waitForJob(res.json.jobId);
  };

  void it('loads from an allowlisted URL (CSV and JSON)', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const job = await load(id, `${filesUrl}/good.csv?X-Signature=secret`);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.equal(job.jobType, 'recordsLoad');
    assert.equal((await allRecords(h, id)).length, 3);
    const json = await load(id, `${filesUrl}/data.json`, 'replace');
    assert.equal(json.currentStatus.status, 'Completed', JSON.stringify(json.currentStatus));
    assert.deepEqual(await allRecords(h, id), [{ id: 1, name: 'j', ok: false }]);
  });

  void it('fails the job when the URL is not allowlisted, and on HTTP errors', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const saved = h.config.loadUrlAllowlist;
    h.config.loadUrlAllowlist = [];
    try {
      const job = await load(id, `${filesUrl}/good.csv`);
      assert.equal(job.currentStatus.status, 'Failed');
      assert.match(job.currentStatus.logData?.message ?? '', /127\.0\.0\.1 is refused: loopback/);
    } finally {
      h.config.loadUrlAllowlist = saved;
    }
    const missing = await load(id, `${filesUrl}/missing.csv`);
    assert.match(missing.currentStatus.logData?.message ?? '', /HTTP 404/);
  });

  void it('fails on defects with line numbers and keeps the old records', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    assert.equal((await uploadAndWait(h, id, rows(5, 'old'))).currentStatus.status, 'Completed');
    const before = await allRecords(h, id);
    const defects: [string, RegExp][] = [
      ['id,name,ok\n1,a,true\nx,b,true\n', /line 3/],
      ['id,name,ok\n1,a,true\n2,,true\n', /line 3/],
      ['id,name,ok\n1,a,maybe\n', /line 2/],
      ['id,name\n1,a\n', /line 1/],
      ['id,name,ok,extra\n1,a,true,z\n', /line 1/],
      ['id,name,ok\n"1,a,true\n', /line 2/],
    ];
    for (const [body, line] of defects) {
      const job = await uploadAndWait(h, id, body, { mode: 'replace' });
      assert.equal(job.currentStatus.status, 'Failed', body);
      const err = job.currentStatus.errorData;
      assert.ok(err !== null && err.errorCount >= 1, body);
      assert.match(`line ${err.errors[0]?.line}`, line, `${body}: ${JSON.stringify(err)}`);
      assert.deepEqual(await allRecords(h, id), before);
    }
    const ds = await h.api<{ recordCount: number }>('GET', `/datasets/${id}`);
    assert.equal(ds.json.recordCount, 5);
    const tables = await h.database.db
      .selectFrom('datasets')
      .select('records_table')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const { records } = h.services;
    assert.deepEqual(await records.listTables(id), [tables.records_table]);
  });

  void it('lets only one of two racing create jobs win', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const a = await requestUpload(h, id);
    const b = await requestUpload(h, id);
    for (const [r, label] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      const put = await putFile(r.url, rows(10, label));
      assert.equal(put.status, 200);
    }
    const outcomes = [await h.waitForJob(a.jobId), await h.waitForJob(b.jobId)].map(
      (j) => j.currentStatus.status,
    );
    assert.deepEqual(outcomes.sort(), ['Completed', 'Failed']);
    assert.equal((await allRecords(h, id)).length, 10);
  });

  void it('replaces atomically: a reader never sees a mix', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await uploadAndWait(h, id, rows(3000, 'old'));
    const put = await requestUpload(h, id, { mode: 'replace' });
    await putFile(put.url, rows(4000, 'new'));
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const page = await h.api<{ data: { name: string }[] }>('GET', `/datasets/${id}/records?pageSize=10000`);
      const names = new Set(page.json.data.map((r) => r.name));
      assert.equal(names.size, 1, 'a page mixed old and new records');
      const [name = ''] = names;
      assert.equal(page.json.data.length, name === 'old' ? 3000 : 4000);
      seen.add(name);
      if (name === 'new') break;
    }
    assert.equal((await h.waitForJob(put.jobId)).currentStatus.status, 'Completed');
    assert.ok(seen.has('new'));
  });
});
