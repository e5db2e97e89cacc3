// The COPY parse thread: the same rows, errors and counters as parsing in the job's thread, and
// failures of the input or an abort surfacing as they are, with the thread stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { DatasetSchema } from '../domain/datasets/schema.js';
import { ErrorCollector, parseRecords, type InputFormat } from '../domain/loading/index.js';
import { formatCopyRows } from '../storage/records/copy-text.js';
import { parseToCopyText } from './copy-thread.js';

const schema: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string', required: false },
    { name: 'ok', type: 'boolean', required: false },
  ],
  primaryKey: ['id'],
};

async function viaThread(
  input: Readable,
  format: InputFormat = 'csv',
  signal = new AbortController().signal,
) {
  const errors = new ErrorCollector();
  const stats = { rowsRead: 0 };
  let text = '';
  let rows = 0;
  for await (const b of parseToCopyText(input, { schema, format, errors, stats, signal })) {
    text += b.text;
    rows += b.rowCount;
  }
  return { text, rows, errors, stats };
}

/** The CSV of `n` rows, one file in many small chunks (chunk borders fall inside records). */
function csv(n: number): string {
  let s = 'ok,id,name\n';
  for (let i = 1; i <= n; i++) s += `${i % 2 === 0},${i},"N\t${i}, \\x"\n`;
  return s;
}
const chunked = (s: string, size = 1000) =>
  Readable.from(
    Array.from({ length: Math.ceil(s.length / size) }, (_, i) =>
      Buffer.from(s.slice(i * size, (i + 1) * size)),
    ),
  );

test('yields the COPY text of parsing in place, numbered across batches', async () => {
  const data = csv(5000);
  const got = await viaThread(chunked(data));
  const errors = new ErrorCollector();
  const inPlace = [];
  for await (const b of parseRecords(Readable.from([Buffer.from(data)]), { schema, format: 'csv', errors }))
    inPlace.push(...b.rows);
  assert.equal(got.rows, 5000);
  assert.equal(got.stats.rowsRead, 5000);
  assert.equal(got.errors.count, 0);
  assert.equal(got.text, formatCopyRows(inPlace, 1));
  assert.match(got.text, /^1\t1\tN\\t1, \\\\x\tf\n2\t2\t/);
});

test('gzip and NDJSON are parsed in the thread too', async () => {
  const ndjson = '{"id":1,"name":"a","ok":true}\n{"id":2,"name":null}\n';
  const got = await viaThread(Readable.from([gzipSync(ndjson)]), 'json');
  assert.equal(got.text, '1\t1\ta\tt\n2\t2\t\\N\t\\N\n');
});

test('defects come back with their lines; nothing more is formatted after the first', async () => {
  const data = 'id,name,ok\n1,a,true\n2,b,maybe\nx,c,false\n4,d,true\n';
  const got = await viaThread(chunked(data, 7));
  assert.equal(got.stats.rowsRead, 4);
  assert.equal(got.errors.count, 2);
  assert.deepEqual(
    got.errors.errors.map((e) => [e.line, e.property]),
    [
      [3, 'ok'],
      [4, 'id'],
    ],
  );
  // The first row came before the defect, in the same batch: no text once a defect is known.
  assert.equal(got.rows, 0);
});

test('keeps the first 100 errors and counts them all', async () => {
  let data = 'id,name,ok\n';
  for (let i = 0; i < 250; i++) data += 'x,a,true\n';
  const got = await viaThread(chunked(data, 100));
  assert.equal(got.errors.count, 250);
  assert.equal(got.errors.errors.length, 100);
  assert.equal(got.errors.errors[99]?.line, 101);
});

test('an input that fails surfaces its own error', async () => {
  const failure = new Error('the download broke');
  async function* broken() {
    yield Buffer.from(csv(10));
    throw failure;
  }
  await assert.rejects(viaThread(Readable.from(broken())), (err) => err === failure);
});

test('an abort throws the signal reason and stops reading', async () => {
  const controller = new AbortController();
  const reason = new Error('stopped');
  let reads = 0;
  async function* endless() {
    for (;;) {
      reads++;
      yield Buffer.from(reads === 1 ? csv(100) : '1000,x,true\n'.repeat(100));
      if (reads === 50) controller.abort(reason);
      await new Promise((r) => setImmediate(r));
    }
  }
  await assert.rejects(
    viaThread(Readable.from(endless()), 'csv', controller.signal),
    (err) => err === reason,
  );
  const after = reads;
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(reads, after, 'the input is no longer read');
});
