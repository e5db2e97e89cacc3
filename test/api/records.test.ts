// Reading records: pages, filters, tokens across generations, 64-bit integers, exports.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { allRecords, uploadAndWait } from '../support/loading.js';

const props = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
  { name: 'active', type: 'boolean' },
  { name: 'score', type: 'number' },
];
const csv = (n: number, offset = 0) =>
  'id,name,active,score\n' +
  Array.from({ length: n }, (_, i) => `${i + 1 + offset},"N, ${i}",${i % 2 === 0},${i / 2}`).join('\n') +
  '\n';

await forEachDatabase('records', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  void it('pages in primary-key order with filters', async () => {
    const id = await h.defineDataset(props, ['id']);
    const job = await uploadAndWait(h, id, csv(250));
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    const all = (await allRecords(h, id, 100)) as { id: number }[];
    assert.equal(all.length, 250);
    assert.deepEqual(
      all.map((r) => r.id),
      Array.from({ length: 250 }, (_, i) => i + 1),
    );
    assert.deepEqual(all[0], { id: 1, name: 'N, 0', active: true, score: 0 });
    const filtered = await h.api<{ metadata: { count: number }; data: { id: number }[] }>(
      'GET',
      `/datasets/${id}/records?active=false&score=0.5`,
    );
    assert.equal(filtered.status, 200, filtered.text);
    assert.deepEqual(
      filtered.json.data.map((r) => r.id),
      [2],
    );
    const unknown = await h.api('GET', `/datasets/${id}/records?nope=1`);
    assert.equal(unknown.status, 400);
    const badType = await h.api('GET', `/datasets/${id}/records?id=abc`);
    assert.equal(badType.status, 400);
    const big = await h.api('GET', `/datasets/${id}/records?pageSize=10001`);
    assert.equal(big.status, 400);
  });

  void it('refuses a page token of an older generation with 409', async () => {
    const id = await h.defineDataset(props, ['id']);
    await uploadAndWait(h, id, csv(20));
    const first = await h.api<{ metadata: { nextPageToken: string } }>(
      'GET',
      `/datasets/${id}/records?pageSize=5`,
    );
    const token = first.json.metadata.nextPageToken;
    assert.equal(typeof token, 'string');
    const replaced = await uploadAndWait(h, id, csv(20, 100), { mode: 'replace' });
    assert.equal(replaced.currentStatus.status, 'Completed');
    const stale = await h.api('GET', `/datasets/${id}/records?pageSize=5&pageToken=${token}`);
    assert.equal(stale.status, 409, stale.text);
    const garbage = await h.api('GET', `/datasets/${id}/records?pageToken=xyz`);
    assert.equal(garbage.status, 400);
  });

  void it('keeps 64-bit integers exact and pages without a primary key', async () => {
    const id = await h.defineDataset([
      { name: 'big', type: 'integer' },
      { name: 'note', type: 'string' },
    ]);
    const body = 'big,note\n9223372036854775807,max\n-9223372036854775808,min\n9007199254740993,2^53+1\n';
    const job = await uploadAndWait(h, id, body);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    const res = await h.api('GET', `/datasets/${id}/records?pageSize=2`);
    assert.match(res.text, /"big":9223372036854775807,"note":"max"/);
    assert.match(res.text, /"big":-9223372036854775808/);
    const filtered = await h.api('GET', `/datasets/${id}/records?big=9007199254740993`);
    assert.match(filtered.text, /"count":1/);
    assert.match(filtered.text, /"big":9007199254740993/);
    const rest = (await allRecords(h, id, 2)) as { note: string }[];
    assert.deepEqual(
      rest.map((r) => r.note),
      ['max', 'min', '2^53+1'],
    );
  });

  void it('exports CSV and NDJSON through signed links, each pinning the generation of its call', async () => {
    const id = await h.defineDataset(props, ['id']);
    await uploadAndWait(h, id, csv(3));
    const csvRes = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
      contentType: 'csv',
    });
    assert.equal(csvRes.status, 200, csvRes.text);
    const csvText = await (await fetch(csvRes.json.url)).text();
    assert.equal(
      csvText,
      'id,name,active,score\r\n1,"N, 0",true,0\r\n2,"N, 1",false,0.5\r\n3,"N, 2",true,1\r\n',
    );
    const again = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
      contentType: 'csv',
    });
    const { generation } = await h.database.db
      .selectFrom('datasets')
      .select('generation')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const linkId = /^\/downloads\/[^/]+\/(\d+)\.csv$/.exec(new URL(again.json.url).pathname)?.[1];
    const link = await h.database.db
      .selectFrom('dataset_export_links')
      .selectAll()
      .where('id', '=', Number(linkId))
      .executeTakeFirstOrThrow();
    assert.equal(link.dataset_id, id);
    assert.equal(link.generation, generation);
    assert.equal(await (await fetch(again.json.url)).text(), csvText);
    const ndjson = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
      contentType: 'json',
    });
    const lines = (await (await fetch(ndjson.json.url)).text()).trim().split('\n');
    assert.deepEqual(JSON.parse(lines[1] ?? ''), { id: 2, name: 'N, 1', active: false, score: 0.5 });
    // Change the signature's first character (to another one: it may already be an 'A').
    const tamperedUrl = csvRes.json.url.replace(
      /signature=([^&])/,
      (_m, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`,
    );
    assert.notEqual(tamperedUrl, csvRes.json.url);
    const tampered = await fetch(tamperedUrl);
    assert.equal(tampered.status, 403);
  });
});
