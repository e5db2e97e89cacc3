// records:retrieve: the answer comes at once (a link that pins the generation of the call, nothing
// written), the download streams that generation's records byte for byte as they always rendered,
// and the sweep keeps the pinned table while the link lives.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { get, type IncomingMessage } from 'node:http';
import { forEachDatabase } from '../support/databases.js';
import { eventually } from '../support/poll.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { allRecords, uploadAndWait } from '../support/loading.js';
import { datasetSchemaOf } from '../../src/domain/datasets/datasets.js';
import { tableSchemaOf } from '../../src/domain/datasets/schema.js';
import { csvHeader, recordCsv, recordJson } from '../../src/domain/records/render.js';
import { signUrl } from '../../src/lib/signed-url.js';
import { nowSeconds } from '../../src/lib/time.js';
import { RETIRED_TABLE_GRACE_MS, sweep } from '../../src/worker/sweep.js';

const SECRET = 'exports-test-secret-0123456789abcdef';

const EVERY_TYPE = [
  { name: 'id', type: 'integer' },
  { name: 'big', type: 'integer' },
  { name: 'text', type: 'string' },
  { name: 'x', type: 'number' },
  { name: 'flag', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'at', type: 'datetime' },
  { name: 'note_2', type: 'string' },
];

const TEXTS = [
  'plain',
  '',
  'a,b',
  'say "hi"',
  'line\nbreak',
  'cr\rlf\r\n',
  'tab\tand \\ backslash',
  '\\.',
  'ünïcødé – 中文 – 🙂',
  'ctrl \u0001 \u001f \u007f \b \f \v',
  "it's",
  ' spaces ',
  'NULL',
  '\\N',
];

const NUMBERS = [
  0,
  -0,
  0.5,
  -1.25,
  0.1 + 0.2,
  1 / 3,
  1e-7,
  1.5e-5,
  1e-5,
  1e-4,
  0.00012345,
  123456.789,
  1e14,
  999999999999999.9,
  1e15,
  1.2345678901234568e16,
  2 ** 53 + 2,
  123456789012345680000,
  1e21,
  1.5e300,
  -2.5e-300,
  5e-324,
  1.7976931348623157e308,
  -9.87654321e-10,
];

const BIGS = [
  '9223372036854775807',
  '-9223372036854775808',
  '9007199254740993',
  '-9007199254740993',
  '0',
  '42',
];

/** A record of every type; row i mixes the lists so every value appears, nulls included. */
function record(i: number): Record<string, unknown> {
  const nullAt = (k: number) => i % 7 === k;
  return {
    id: i,
    big: nullAt(1) ? null : BIGS[i % BIGS.length],
    text: nullAt(2) ? null : TEXTS[i % TEXTS.length],
    x: nullAt(3) ? null : NUMBERS[i % NUMBERS.length],
    flag: nullAt(4) ? null : i % 2 === 0,
    day: nullAt(5) ? null : `20${String(i % 30).padStart(2, '0')}-02-28`,
    at: nullAt(6) ? null : '2024-05-06T07:08:09.123Z',
    note_2: TEXTS[(i * 5) % TEXTS.length],
  };
}
const ROWS = Array.from({ length: 60 }, (_, i) => record(i + 1));
// Integers beyond 2^53 go as strings of digits (a JSON number would lose them).
const NDJSON = ROWS.map((r) => JSON.stringify(r)).join('\n') + '\n';

await forEachDatabase('exports', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target, { SIGNING_SECRET: SECRET, EXPORT_DOWNLOADS_MAX: '1' });
  });
  after(() => h.close());

  const retrieve = async (id: string, contentType: 'csv' | 'json' = 'csv') => {
    const res = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, { contentType });
    assert.equal(res.status, 200, res.text);
    return res.json.url;
  };
  const download = async (url: string) => {
    const res = await fetch(url);
    assert.equal(res.status, 200, await res.clone().text());
    return res.text();
  };
  /** Whether no object is left under the dataset, once the worker's cleanup after a job has run. */
  const nothingStored = (id: string) =>
    eventually(async () => (await h.services.objects.list(`datasets/${id}/`)).length === 0, 10_000);
  const currentTable = async (id: string) =>
    (
      await h.database.db
        .selectFrom('datasets')
        .select('records_table')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).records_table as string;
  /** The old export path: every row through the record store's reader and render.ts. */
  const renderedAsBefore = async (id: string, table: string) => {
    const schema = await datasetSchemaOf(h.database.db, id);
    let csv = csvHeader(schema.properties);
    let ndjson = '';
    for await (const rows of h.services.records.readAll(table, tableSchemaOf(schema))) {
      for (const values of rows) {
        csv += recordCsv(values);
        ndjson += `${recordJson(schema.properties, values)}\n`;
      }
    }
    return { csv, ndjson };
  };
  const sweepAt = (now: number) =>
    sweep({ db: h.database.db, objects: h.services.objects, records: h.services.records }, now);

  void it('streams every column type byte for byte as records always rendered', async () => {
    const id = await h.defineDataset(EVERY_TYPE, ['id']);
    const job = await uploadAndWait(h, id, NDJSON, {
      contentType: 'json',
      mediaType: 'application/x-ndjson',
    });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    const expected = await renderedAsBefore(id, await currentTable(id));
    assert.equal(expected.ndjson.split('\n').length - 1, ROWS.length);
    // The rendering under test is the one the API always gave: spot checks of its rules.
    assert.match(expected.csv, /^id,big,text,x,flag,day,at,note_2\r\n/);
    assert.match(expected.csv, /,9223372036854775807,/);
    assert.match(expected.ndjson, /"big":-9223372036854775808,/);
    assert.match(expected.ndjson, /"x":1e\+21,/);
    assert.match(expected.ndjson, /"x":0\.00001,/);
    assert.match(expected.csv, /,"line\nbreak",/);
    assert.match(expected.ndjson, /"flag":null,/);

    assert.equal(await download(await retrieve(id, 'csv')), expected.csv);
    assert.equal(await download(await retrieve(id, 'json')), expected.ndjson);
    // Every value parses back to what was loaded.
    const parsed = expected.ndjson
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      parsed.map((r) => r.x),
      ROWS.map((r) => (Object.is(r.x, -0) ? 0 : r.x)),
    );
  });

  void it('a table of one text column: `\\.`, empty strings and nulls as before', async () => {
    const id = await h.defineDataset([{ name: 'only', type: 'string' }]);
    const values = ['\\.', '', null, 'a"b', 'x,y', '\\.\\.'];
    const body = values.map((v) => JSON.stringify({ only: v })).join('\n');
    const job = await uploadAndWait(h, id, body, { contentType: 'json', mediaType: 'application/x-ndjson' });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    const expected = await renderedAsBefore(id, await currentTable(id));
    assert.equal(expected.csv, 'only\r\n\\.\r\n\r\n\r\n"a""b"\r\n"x,y"\r\n\\.\\.\r\n');
    assert.equal(await download(await retrieve(id, 'csv')), expected.csv);
    assert.equal(await download(await retrieve(id, 'json')), expected.ndjson);
  });

  void it('answers without writing anything, with a link to the records as they were at the call', async () => {
    const id = await h.defineDataset(EVERY_TYPE, ['id']);
    await uploadAndWait(h, id, NDJSON, { contentType: 'json', mediaType: 'application/x-ndjson' });
    const tableA = await currentTable(id);
    const before = await renderedAsBefore(id, tableA);
    const csvUrl = await retrieve(id, 'csv');
    const jsonUrl = await retrieve(id, 'json');
    // Nothing was read or written to answer: no export object exists, before or after a download
    // (the upload's file goes just after its job ends).
    assert.ok(await nothingStored(id), 'no object under the dataset');

    // Replace the records (B): the links still give A's.
    const rowsB = ROWS.slice(0, 3).map((r) => ({ ...r, text: 'B' }));
    const replaced = await uploadAndWait(h, id, rowsB.map((r) => JSON.stringify(r)).join('\n'), {
      mode: 'replace',
      contentType: 'json',
      mediaType: 'application/x-ndjson',
    });
    assert.equal(replaced.currentStatus.status, 'Completed');
    assert.notEqual(await currentTable(id), tableA);
    assert.equal((await allRecords(h, id)).length, 3);
    assert.equal(await download(csvUrl), before.csv);
    assert.equal(await download(jsonUrl), before.ndjson);
    assert.ok(await nothingStored(id), 'no object under the dataset');

    // Past the retired-table grace, the sweep keeps A's table: an unexpired link pins it.
    const tables = () => h.services.records.listTables(id);
    await sweepAt(Date.now() + RETIRED_TABLE_GRACE_MS + 60_000);
    assert.ok((await tables()).includes(tableA));
    assert.equal(await download(csvUrl), before.csv);
    // A new link is to B.
    assert.match(await download(await retrieve(id, 'csv')), /^id,big,[^\n]*\n1,[^\n]*,B,/);

    // Once the link has expired (and its own grace passed), the table is dropped as usual.
    const expiry = nowSeconds() * 1000 + 3600_000;
    await sweepAt(expiry + RETIRED_TABLE_GRACE_MS - 60_000);
    assert.ok((await tables()).includes(tableA), 'kept in the grace after the expiry');
    await sweepAt(expiry + RETIRED_TABLE_GRACE_MS + 60_000);
    assert.ok(!(await tables()).includes(tableA));
    const links = await h.database.db
      .selectFrom('dataset_export_links')
      .select('table_name')
      .where('dataset_id', '=', id)
      .execute();
    assert.ok(!links.some((l) => l.table_name === tableA), 'expired links are forgotten');
  });

  void it('an expired link is 403; a link of a deleted dataset 404; a dataset never loaded gives a header', async () => {
    const id = await h.defineDataset(EVERY_TYPE, ['id']);
    const csvUrl = await retrieve(id, 'csv');
    assert.equal(await download(csvUrl), 'id,big,text,x,flag,day,at,note_2\r\n');
    assert.equal(await download(await retrieve(id, 'json')), '');

    const path = new URL(csvUrl).pathname;
    const expired = signUrl(SECRET, new URL(csvUrl).origin, 'GET', path, nowSeconds() - 1);
    const res = await fetch(expired);
    assert.equal(res.status, 403);
    assert.match(await res.text(), /expired/);

    await uploadAndWait(h, id, NDJSON, { contentType: 'json', mediaType: 'application/x-ndjson' });
    const loadedUrl = await retrieve(id, 'csv');
    assert.equal((await h.api('DELETE', `/datasets/${id}`)).status, 204);
    const links = await h.database.db
      .selectFrom('dataset_export_links')
      .select('id')
      .where('dataset_id', '=', id)
      .execute();
    assert.deepEqual(links, []);
    assert.deepEqual(await h.services.records.listTables(id), []);
    assert.equal((await fetch(loadedUrl)).status, 404);
    assert.equal((await fetch(csvUrl)).status, 404);
  });

  void it('streams at most EXPORT_DOWNLOADS_MAX downloads at once; the next gets 503 with Retry-After', async () => {
    const id = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'text', type: 'string' },
      ],
      ['id'],
    );
    // 20 MB of records: more than loopback sockets' buffers hold, so a client that does not read keeps
    // its download streaming.
    const rows = Array.from({ length: 10_000 }, (_, i) => `${i},${'x'.repeat(2000)}`);
    await uploadAndWait(h, id, `id,text\n${rows.join('\n')}\n`);
    const url = await retrieve(id, 'csv');
    const held = await new Promise<IncomingMessage>((resolve, reject) =>
      get(url, resolve).on('error', reject),
    );
    assert.equal(held.statusCode, 200);
    held.pause();

    const refused = await fetch(url);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.match(((await refused.json()) as { detail: string }).detail, /as many downloads as it may/);

    // The slot comes back when the held download's connection goes.
    held.destroy();
    let text = '';
    for (let i = 0; i < 50 && text === ''; i++) {
      const res = await fetch(url);
      if (res.status === 200) text = await res.text();
      else await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(text.split('\r\n').length, 10_002, 'header, 10,000 records and the final line end');
  });
});
