import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { DatasetSchema } from '../datasets/schema.js';
import { MAX_RECORD_CHARS } from './context.js';
import { ErrorCollector, parseRecords, type CellValue, type InputFormat, type ParsedBatch } from './index.js';

const schema: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string', required: false },
  ],
  primaryKey: ['id'],
};

const SAMPLES: Record<string, string> = {
  csv: 'id,name\n1,a\n2,b\n',
  tsv: 'id\tname\n1\ta\n2\tb\n',
  array: '\n [{"id":1,"name":"a"},{"id":2,"name":"b"}]',
  ndjson: '\n\n{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n',
};

async function rowsOf(
  input: Readable | AsyncIterable<Buffer>,
  format: InputFormat,
  errors = new ErrorCollector(),
) {
  const rows: CellValue[][] = [];
  for await (const batch of parseRecords(input, { schema, format, errors })) rows.push(...batch.rows);
  return rows;
}

test('auto-detection of every format, plain and gzip, from real files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dx-parse-'));
  try {
    for (const [name, text] of Object.entries(SAMPLES)) {
      for (const gzip of [false, true]) {
        const path = join(dir, `${name}${gzip ? '.gz' : ''}`);
        await writeFile(path, gzip ? gzipSync(text) : text);
        const errors = new ErrorCollector();
        const rows = await rowsOf(createReadStream(path, { highWaterMark: 3 }), 'auto', errors);
        assert.deepEqual(errors.errors, [], `${name} gzip=${gzip}`);
        assert.deepEqual(rows, [
          [1, 'a'],
          [2, 'b'],
        ]);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('explicit formats: json takes both shapes; csv does not guess tabs', async () => {
  assert.equal((await rowsOf(Readable.from([Buffer.from(SAMPLES.array ?? '')]), 'json')).length, 2);
  assert.equal((await rowsOf(Readable.from([Buffer.from(SAMPLES.ndjson ?? '')]), 'json')).length, 2);
  const errors = new ErrorCollector();
  await rowsOf(Readable.from([Buffer.from(SAMPLES.tsv ?? '')]), 'csv', errors);
  assert.equal(errors.errors[0]?.message, 'column "id\tname" is not a property of the dataset');
});

test('a corrupt gzip stream is thrown, not swallowed', async () => {
  const gz = gzipSync(SAMPLES.csv ?? '');
  const broken = Buffer.concat([gz.subarray(0, 12), Buffer.from('garbage that is not deflate')]);
  await assert.rejects(rowsOf(Readable.from([broken]), 'auto'), /The compressed file is corrupt \(gzip: /);
});

test('any async iterable of buffers is accepted', async () => {
  async function* source(): AsyncGenerator<Buffer> {
    yield Buffer.from('id,na');
    yield Buffer.from('me\n1,a\n');
  }
  assert.deepEqual(await rowsOf(source(), 'auto'), [[1, 'a']]);
});

test('batches hold about batchSize rows, with lines; stats count every record read', async () => {
  let text = 'id,name\n';
  for (let i = 1; i <= 5000; i++) text += i % 1000 === 0 ? `x${i},bad\n` : `${i},n${i}\n`;
  const errors = new ErrorCollector();
  const stats = { rowsRead: 0 };
  const batches: ParsedBatch[] = [];
  const input = Readable.from([Buffer.from(text)]);
  for await (const batch of parseRecords(input, { schema, format: 'csv', errors, stats, batchSize: 1000 })) {
    batches.push(batch);
  }
  assert.deepEqual(
    batches.map((b) => [b.rows.length, b.lines.length]),
    [
      [1000, 1000],
      [1000, 1000],
      [1000, 1000],
      [1000, 1000],
      [995, 995],
    ],
  );
  const lines = batches.flatMap((b) => b.lines);
  assert.equal(lines.length, 4995);
  assert.equal(lines[0], 2);
  assert.equal(lines.at(-1), 5000); // line 5001 holds a bad row
  assert.equal(stats.rowsRead, 5000);
  assert.equal(errors.count, 5);
});

test('a record past the size limit (an unclosed quote) stops the parse with an error', async () => {
  const long = 'x'.repeat(3 * MAX_RECORD_CHARS);
  const cases: [InputFormat, string, number][] = [
    ['csv', `id,name\n1,a\n2,"${long}`, 3],
    ['json', `{"id":1,"name":"a"}\n{"id":2,"name":"${long}`, 2],
    ['json', `[{"id":1,"name":"a"},\n{"id":2,"name":"${long}`, 2],
  ];
  for (const [format, text, line] of cases) {
    const chunks: Buffer[] = [];
    for (let i = 0; i < text.length; i += 65536) chunks.push(Buffer.from(text.slice(i, i + 65536)));
    const errors = new ErrorCollector();
    const rows = await rowsOf(Readable.from(chunks), format, errors);
    assert.deepEqual(rows, [[1, 'a']], text.slice(0, 30));
    assert.equal(errors.errors.length, 1, text.slice(0, 30));
    assert.equal(errors.errors[0]?.line, line, text.slice(0, 30));
    assert.match(errors.errors[0]?.message ?? '', /longer than/);
  }
});

test('abort: stops reading, destroys the input and throws the reason', async () => {
  const controller = new AbortController();
  let pulled = 0;
  // An endless source: only the abort can end this parse.
  const input = new Readable({
    read() {
      this.push(pulled++ === 0 ? 'id,name\n' : '1,a\n'.repeat(1000));
    },
  });
  const errors = new ErrorCollector();
  const batches = parseRecords(input, {
    schema,
    format: 'csv',
    errors,
    signal: controller.signal,
    batchSize: 500,
  });
  await assert.rejects(
    (async () => {
      for await (const _batch of batches) controller.abort(new Error('job cancelled'));
    })(),
    { message: 'job cancelled' },
  );
  assert.equal(input.destroyed, true);
});

test('a signal aborted before the start rejects at once', async () => {
  const input = Readable.from([Buffer.from(SAMPLES.csv ?? '')]);
  const signal = AbortSignal.abort(new Error('too late'));
  await assert.rejects(
    (async () => {
      for await (const _ of parseRecords(input, {
        schema,
        format: 'auto',
        errors: new ErrorCollector(),
        signal,
      })) {
        assert.fail('no batch expected');
      }
    })(),
    { message: 'too late' },
  );
  assert.equal(input.destroyed, true);
});

test('a consumer that stops early releases the input', async () => {
  const input = Readable.from([Buffer.from('id,name\n' + '1,a\n'.repeat(10000))]);
  for await (const _ of parseRecords(input, {
    schema,
    format: 'csv',
    errors: new ErrorCollector(),
    batchSize: 10,
  })) {
    break;
  }
  assert.equal(input.destroyed, true);
});

test('fields=primaryKey (mode=delete): key columns in any order, in key order out; others refused', async () => {
  const keyed: DatasetSchema = {
    properties: [
      { name: 'id', type: 'integer', required: true },
      { name: 'name', type: 'string', required: false },
      { name: 'region', type: 'string', required: true },
    ],
    primaryKey: ['region', 'id'],
  };
  const parse = async (text: string, format: InputFormat) => {
    const errors = new ErrorCollector();
    const rows: CellValue[][] = [];
    const input = Readable.from([Buffer.from(text)]);
    for await (const batch of parseRecords(input, { schema: keyed, fields: 'primaryKey', format, errors }))
      rows.push(...batch.rows);
    return { rows, errors };
  };
  const notKey =
    "is not part of the primary key (region, id); a mode=delete file holds the key's values only";

  // The key's columns alone, in any order; a malformed or missing key value is a row error.
  const csv = await parse('id,region\n1,eu\nx,eu\n2,\n3,us\n', 'csv');
  assert.deepEqual(csv.rows, [
    ['eu', 1],
    ['us', 3],
  ]);
  assert.equal(csv.errors.fileErrors, 0);
  assert.equal(csv.errors.rowsRejected, 2);
  assert.deepEqual(
    csv.errors.errors.map((e) => [e.line, e.property]),
    [
      [3, 'id'],
      [4, 'region'],
    ],
  );

  // A CSV column outside the key, a property or not, is a defect of the header: nothing loads.
  const extra = await parse('region,id,name,phone\neu,1,a,555\n', 'csv');
  assert.deepEqual(extra.rows, []);
  assert.deepEqual(
    extra.errors.errors.map((e) => [e.line, e.property, e.message]),
    [
      [1, 'name', `column "name" ${notKey}`],
      [1, 'phone', `column "phone" ${notKey}`],
    ],
  );
  assert.equal(extra.errors.fileErrors, 2);
  // A missing key column too.
  const partial = await parse('id\n1\n', 'csv');
  assert.equal(partial.errors.errors[0]?.message, 'the header has no column for property "region"');

  // JSON: a property outside the key is a row error of its record; the others load.
  const json = await parse(
    '{"id":1,"region":"eu"}\n{"id":2,"region":"eu","name":"b"}\n{"region":"us"}\n',
    'json',
  );
  assert.deepEqual(json.rows, [['eu', 1]]);
  assert.deepEqual(
    json.errors.errors.map((e) => [e.line, e.property, e.message]),
    [
      [2, 'name', `key "name" ${notKey}`],
      [3, 'id', 'a value is required'],
    ],
  );
  assert.equal(json.errors.fileErrors, 0);
});
