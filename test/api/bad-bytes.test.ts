// Bad bytes are named through the HTTP interface, on both engines: invalid UTF-8 and NUL characters
// are row errors with line and property (never an internal error, never a silent U+FFFD); a
// truncated gzip file and one inflating past MAX_INFLATED_BYTES fail the job saying so.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { allRecords, putFile } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
const INFLATE_LIMIT = 50_000;

interface RowError {
  line: number;
  property?: string;
  message: string;
}

await forEachDatabase('bad bytes in loaded files', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target, { MAX_INFLATED_BYTES: String(INFLATE_LIMIT) });
  });
  after(() => h.close());

  const upload = async (
    id: string,
    body: Buffer,
    options: { maxBadRecords?: number; contentType?: 'csv' | 'json' } = {},
  ) => {
    const q = options.maxBadRecords !== undefined ? `?maxBadRecords=${options.maxBadRecords}` : '';
    const res = await h.api<{ url: string; jobId: string }>('POST', `/datasets/${id}/uploadUrl${q}`, {
      contentType: options.contentType ?? 'csv',
    });
    assert.equal(res.status, 202, res.text);
    const put = await putFile(
      res.json.url,
      body,
      options.contentType === 'json' ? 'application/json' : 'text/csv',
    );
    assert.equal(put.status, 200, await put.text());
    const job = await h.waitForJob(res.json.jobId);
    const errors = await h.api<{ data: RowError[] }>('GET', `/datasets/jobs/${res.json.jobId}/errors`);
    assert.equal(errors.status, 200, errors.text);
    return { job, errors: errors.json.data };
  };

  void it('invalid UTF-8 and NUL characters in CSV are row errors naming line and property', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const file = Buffer.concat([
      Buffer.from('id,name\n1,fine\n2,bad'),
      Buffer.from([0xff, 0xc3]),
      Buffer.from('\n3,nul\u0000here\n4,caf\u00e9 \ufffd kept\n'),
    ]);
    const failed = await upload(id, file);
    assert.equal(failed.job.currentStatus.status, 'Failed');
    assert.doesNotMatch(failed.job.currentStatus.logData?.message ?? '', /internal error/i);
    assert.deepEqual(
      failed.errors.map((e) => [e.line, e.property]),
      [
        [3, 'name'],
        [4, 'name'],
      ],
    );
    assert.match(failed.errors[0]?.message ?? '', /not valid UTF-8/);
    assert.match(failed.errors[1]?.message ?? '', /NUL character/);

    const tolerated = await upload(id, file, { maxBadRecords: 2 });
    assert.equal(tolerated.job.currentStatus.status, 'Completed');
    assert.deepEqual(await allRecords(h, id), [
      { id: 1, name: 'fine' },
      { id: 4, name: 'caf\u00e9 \ufffd kept' },
    ]);
  });

  void it('invalid UTF-8 and NUL escapes in JSON are row errors naming line and property', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const file = Buffer.concat([
      Buffer.from('[\n{"id":1,"name":"x'),
      Buffer.from([0xe2, 0x28, 0xa1]),
      Buffer.from('"},\n{"id":2,"name":"a\\u0000b"},\n{"id":3,"name":"ok"}\n]'),
    ]);
    const result = await upload(id, file, { maxBadRecords: 2, contentType: 'json' });
    assert.equal(result.job.currentStatus.status, 'Completed');
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.property]),
      [
        [2, 'name'],
        [3, 'name'],
      ],
    );
    assert.deepEqual(await allRecords(h, id), [{ id: 3, name: 'ok' }]);
  });

  void it('a truncated gzip file fails the job saying the compressed file is truncated', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const rows = Array.from({ length: 3000 }, (_, i) => `${i},name ${i}`).join('\n');
    const gz = gzipSync(`id,name\n${rows}\n`);
    const { job } = await upload(id, gz.subarray(0, Math.floor(gz.length * 0.6)));
    assert.equal(job.currentStatus.status, 'Failed');
    assert.match(job.currentStatus.logData?.message ?? '', /compressed file is truncated/);
    assert.equal((await h.api('GET', `/datasets/${id}`)).json.recordCount ?? 0, 0);
  });

  void it('a gzip file inflating past MAX_INFLATED_BYTES fails the job saying so', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const gz = gzipSync(`id,name\n1,${'a'.repeat(4 * INFLATE_LIMIT)}\n`);
    assert.ok(gz.length < INFLATE_LIMIT, 'the packed file itself is under the limit');
    const { job } = await upload(id, gz);
    assert.equal(job.currentStatus.status, 'Failed');
    assert.match(
      job.currentStatus.logData?.message ?? '',
      new RegExp(`inflates to more than ${INFLATE_LIMIT} bytes \\(MAX_INFLATED_BYTES\\)`),
    );
    // A small one still loads.
    const small = await upload(id, gzipSync('id,name\n1,a\n'));
    assert.equal(small.job.currentStatus.status, 'Completed');
  });
});
