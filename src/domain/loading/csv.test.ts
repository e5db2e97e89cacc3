import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { DatasetSchema } from '../datasets/schema.js';
import { ErrorCollector, parseRecords, type CellValue, type InputFormat, type LoadError } from './index.js';

const schema: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string', required: false },
    { name: 'active', type: 'boolean', required: false },
  ],
  primaryKey: ['id'],
};

/** The input as a stream of `size`-byte chunks, so records and characters straddle chunks. */
function chunked(text: string | Buffer, size = 7): Readable {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

async function parse(
  text: string | Buffer,
  format: InputFormat = 'csv',
  s: DatasetSchema = schema,
  size?: number,
): Promise<{ rows: CellValue[][]; lines: number[]; errors: LoadError[]; count: number; rowsRead: number }> {
  const errors = new ErrorCollector();
  const stats = { rowsRead: 0 };
  const rows: CellValue[][] = [];
  const lines: number[] = [];
  for await (const batch of parseRecords(chunked(text, size), { schema: s, format, errors, stats })) {
    rows.push(...batch.rows);
    lines.push(...batch.lines);
  }
  return { rows, lines, errors: errors.errors, count: errors.count, rowsRead: stats.rowsRead };
}

test('CSV: typed rows in schema order whatever the column order; empty is null', async () => {
  const r = await parse('name,active,id\nAda,true,1\n,FALSE,2\n"",0,3\nBob,,4\n');
  assert.deepEqual(r.rows, [
    [1, 'Ada', true],
    [2, null, false],
    [3, null, false],
    [4, 'Bob', null],
  ]);
  assert.deepEqual(r.lines, [2, 3, 4, 5]);
  assert.equal(r.count, 0);
  assert.equal(r.rowsRead, 4);
});

test('CSV: BOM, CRLF, no final newline, blank lines skipped but counted', async () => {
  const r = await parse('\uFEFFid,name,active\r\n1,a,1\r\n\r\n2,"b",0\r\n\n3,c,true');
  assert.deepEqual(r.rows, [
    [1, 'a', true],
    [2, 'b', false],
    [3, 'c', true],
  ]);
  assert.deepEqual(r.lines, [2, 4, 6]);
  assert.equal(r.count, 0);
});

test('CSV: quoted fields keep commas, doubled quotes and newlines; lines stay right', async () => {
  const text =
    'id,name,active\n1,"a, b",1\n2,"say ""hi""",1\n3,"two\nlines\r\nthree",0\n4,plain,1\n5,x,maybe\n';
  for (const size of [1, 3, 7, 64 * 1024]) {
    const r = await parse(text, 'csv', schema, size);
    assert.deepEqual(
      r.rows.map((row) => row[1]),
      ['a, b', 'say "hi"', 'two\nlines\r\nthree', 'plain'],
      `chunks of ${size}`,
    );
    assert.deepEqual(r.lines, [2, 3, 4, 7], `chunks of ${size}`);
    assert.deepEqual(r.errors, [
      { line: 8, property: 'active', message: '"maybe" is not a boolean (true/false or 1/0)' },
    ]);
  }
});

test('CSV: multi-byte characters split across chunks survive', async () => {
  const r = await parse('id,name,active\n1,Zoë 日本 🎉,1\n', 'csv', schema, 1);
  assert.deepEqual(r.rows, [[1, 'Zoë 日本 🎉', true]]);
});

test('TSV: tab-delimited, explicit or detected', async () => {
  const text = 'id\tname\tactive\n1\ta, b\t1\n2\t"q\tr"\t0\n';
  for (const format of ['tsv', 'auto'] as const) {
    const r = await parse(text, format);
    assert.deepEqual(r.rows, [
      [1, 'a, b', true],
      [2, 'q\tr', false],
    ]);
  }
});

test('CSV header: missing, unknown and duplicated columns are errors on line 1; no row is yielded', async () => {
  const r = await parse('id,nam,id,active\n1,x,1,true\n2,y,2,maybe\n');
  assert.deepEqual(r.errors, [
    { line: 1, property: 'nam', message: 'column "nam" is not a property of the dataset' },
    { line: 1, property: 'id', message: 'column "id" appears more than once in the header' },
    { line: 1, property: 'name', message: 'the header has no column for property "name"' },
    // Rows are still checked, so one upload reports as much as possible.
    { line: 3, property: 'active', message: '"maybe" is not a boolean (true/false or 1/0)' },
  ]);
  assert.deepEqual(r.rows, []);
  assert.equal(r.rowsRead, 2);
});

test('CSV: an empty file or an empty first line is an error', async () => {
  assert.deepEqual((await parse('')).errors, [
    { line: 1, message: 'expected a header row naming the properties' },
  ]);
  assert.deepEqual((await parse('\nid,name,active\n')).errors, [
    { line: 1, message: 'expected a header row naming the properties' },
  ]);
  const headerOnly = await parse('id,name,active\n');
  assert.deepEqual([headerOnly.rows, headerOnly.count], [[], 0]);
});

test('CSV row defects: wrong field count, wrong types, missing required and key values', async () => {
  const s: DatasetSchema = {
    properties: [
      { name: 'id', type: 'integer', required: false }, // a key: required all the same
      { name: 'name', type: 'string', required: true },
      { name: 'n', type: 'number', required: false },
    ],
    primaryKey: ['id'],
  };
  const r = await parse('id,name,n\n1,a,1.5\n2,b\n3,c,1,4\n,d,2\n4,,x\nx,e,\n5,f,2\n', 'csv', s);
  assert.deepEqual(r.errors, [
    { line: 3, message: 'the record has 2 fields but the header has 3' },
    { line: 4, message: 'the record has 4 fields but the header has 3' },
    { line: 5, property: 'id', message: 'a value is required' },
    { line: 6, property: 'name', message: 'a value is required' },
    { line: 6, property: 'n', message: '"x" is not a finite decimal number' },
    { line: 7, property: 'id', message: '"x" is not an integer' },
  ]);
  assert.deepEqual(r.rows, [
    [1, 'a', 1.5],
    [5, 'f', 2],
  ]);
  assert.deepEqual(r.lines, [2, 8]);
  assert.equal(r.rowsRead, 7);
});

test('CSV: integers beyond 2^53 are bigint, beyond 64 bits an error', async () => {
  const r = await parse(
    'id,name,active\n9007199254740993,a,1\n-9223372036854775808,b,1\n9223372036854775808,c,1\n',
  );
  assert.deepEqual(
    r.rows.map((row) => row[0]),
    [9007199254740993n, -9223372036854775808n],
  );
  assert.deepEqual(r.errors, [
    { line: 4, property: 'id', message: '"9223372036854775808" is outside the 64-bit integer range' },
  ]);
});

test('CSV: malformed and unclosed quotes are errors on the line of the record', async () => {
  const bad = await parse('id,name,active\n1,"ab"c,1\n2,ok,1\n');
  assert.equal(bad.errors[0]?.line, 2);
  assert.match(bad.errors[0]?.message ?? '', /malformed quotes/);
  const unclosed = await parse('id,name,active\n1,ok,1\n2,"never closed,1\n3,x,1\n');
  assert.deepEqual(unclosed.rows, [[1, 'ok', true]]);
  assert.equal(unclosed.errors[0]?.line, 3);
  assert.match(unclosed.errors[0]?.message ?? '', /malformed quotes: Quoted field unterminated/);
});

test('errors: all are counted, the first 100 kept in file order', async () => {
  let text = 'id,name,active\n';
  for (let i = 0; i < 250; i++) text += `${i},n,nope\n`;
  const r = await parse(text, 'csv', schema, 4096);
  assert.equal(r.count, 250);
  assert.equal(r.errors.length, 100);
  assert.deepEqual(
    r.errors.slice(0, 2).map((e) => e.line),
    [2, 3],
  );
  assert.equal(r.errors[99]?.line, 101);
  assert.equal(r.rowsRead, 250);
});
