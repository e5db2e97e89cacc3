// Bad bytes are named: invalid UTF-8 and NUL characters are row errors with line and property
// (unless invalid bytes are to be replaced), whatever the chunking; a broken or oversized gzip
// stream fails with a message that says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { DatasetSchema } from '../datasets/schema.js';
import { ErrorCollector, InputFailure, parseRecords, type CellValue, type InputFormat } from './index.js';
import { INVALID_BYTES_MARK, Utf8Decoder } from './text.js';

const schema: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string', required: false },
  ],
  primaryKey: ['id'],
};

/** The bytes in pieces of `size` bytes: sequences cut at every place. */
function pieces(bytes: Buffer, size: number): Readable {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return Readable.from(out, { objectMode: false });
}

async function parse(
  input: Readable,
  format: InputFormat,
  options: { invalidUtf8?: 'reject' | 'replace'; maxInflatedBytes?: number } = {},
) {
  const errors = new ErrorCollector();
  const rows: CellValue[][] = [];
  for await (const batch of parseRecords(input, { schema, format, errors, ...options }))
    rows.push(...batch.rows);
  return { rows, errors };
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

test('the decoder marks each invalid sequence, keeps real U+FFFD and valid text cut anywhere', () => {
  const input = bytes('a€😀\uFFFDb', [0xff], 'c', [0xe2, 0x82], 'd', [0xc3]);
  for (let size = 1; size <= input.length; size++) {
    const decoder = new Utf8Decoder('reject');
    let text = '';
    for (let i = 0; i < input.length; i += size) text += decoder.write(input.subarray(i, i + size));
    text += decoder.end();
    const M = INVALID_BYTES_MARK;
    assert.equal(text, `a€😀\uFFFDb${M}c${M}d${M}`, `pieces of ${size}`);
  }
});

for (const [format, file, line] of [
  ['csv', bytes('id,name\n1,ok\n2,bad', [0xff, 0xfe], 'x\n3,caf', [0xc3, 0xa9], '\n'), 3],
  [
    'json',
    bytes(
      '[{"id":1,"name":"ok"},\n{"id":2,"name":"bad',
      [0xff],
      '"},\n{"id":3,"name":"caf',
      [0xc3, 0xa9],
      '"}]',
    ),
    2,
  ],
  [
    'json',
    bytes(
      '{"id":1,"name":"ok"}\n{"id":2,"name":"bad',
      [0xed, 0xa0, 0x80],
      '"}\n{"id":3,"name":"caf',
      [0xc3, 0xa9],
      '"}\n',
    ),
    2,
  ],
] as const) {
  test(`${format}: invalid UTF-8 is a row error naming line and property, in pieces of any size`, async () => {
    for (const size of [1, 2, 3, 7, 64 * 1024]) {
      const { rows, errors } = await parse(pieces(file, size), format);
      assert.deepEqual(rows, [
        [1, 'ok'],
        [3, 'café'],
      ]);
      assert.equal(errors.errors.length, 1, `pieces of ${size}: ${JSON.stringify(errors.errors)}`);
      const [error] = errors.errors;
      assert.equal(error?.line, line);
      assert.equal(error?.property, 'name');
      assert.match(error?.message ?? '', /not valid UTF-8/);
    }
  });
}

test('LOAD_INVALID_UTF8=replace loads invalid bytes as U+FFFD', async () => {
  const file = bytes('id,name\n1,a', [0xff], 'b\n');
  const { rows, errors } = await parse(pieces(file, 3), 'csv', { invalidUtf8: 'replace' });
  assert.equal(errors.count, 0);
  assert.deepEqual(rows, [[1, 'a\uFFFDb']]);
});

test('the original text of a row with invalid bytes is stored with U+FFFD (it must be storable)', async () => {
  const errors = new ErrorCollector();
  const input = pieces(bytes('id,name\n1,a', [0xff], 'b\n'), 5);
  for await (const _ of parseRecords(input, { schema, format: 'csv', errors }));
  const [stored] = errors.take();
  assert.equal(stored?.originalText, '1,a\uFFFDb');
});

test('a NUL character is a row error naming line and property, in CSV, JSON text and JSON escapes', async () => {
  const files: [InputFormat, string][] = [
    ['csv', 'id,name\n1,a\u0000b\n2,ok\n'],
    ['json', '[{"id":1,"name":"a\\u0000b"},{"id":2,"name":"ok"}]'],
    ['json', '{"id":1,"name":"a\\u0000b"}\n{"id":2,"name":"ok"}\n'],
  ];
  for (const [format, text] of files) {
    const { rows, errors } = await parse(pieces(Buffer.from(text), 4), format);
    assert.deepEqual(rows, [[2, 'ok']], text);
    assert.deepEqual(
      errors.errors.map((e) => [e.line, e.property]),
      [[1 + (format === 'csv' ? 1 : 0), 'name']],
      text,
    );
    assert.match(errors.errors[0]?.message ?? '', /NUL character/);
  }
});

test('a raw NUL in a JSON string is invalid JSON, said so on its line', async () => {
  const text = '[{"id":1,"name":"a\u0000b"},{"id":2,"name":"ok"}]';
  const { rows, errors } = await parse(pieces(Buffer.from(text), 4), 'json');
  assert.deepEqual(rows, [[2, 'ok']]);
  assert.equal(errors.errors[0]?.line, 1);
  assert.match(errors.errors[0]?.message ?? '', /invalid JSON \(it has a NUL character\)/);
});

test('an escaped backslash before u0000 is text, not a NUL', async () => {
  const { rows, errors } = await parse(pieces(Buffer.from('[{"id":1,"name":"a\\\\u0000"}]'), 5), 'json');
  assert.equal(errors.count, 0);
  assert.deepEqual(rows, [[1, 'a\\u0000']]);
});

test('a lone surrogate escape in JSON is a row error', async () => {
  const { rows, errors } = await parse(pieces(Buffer.from('[{"id":1,"name":"\\ud800x"}]'), 5), 'json');
  assert.deepEqual(rows, []);
  assert.match(errors.errors[0]?.message ?? '', /unpaired UTF-16 surrogate/);
});

test('a truncated gzip stream fails saying the compressed file is truncated', async () => {
  const gz = gzipSync('id,name\n' + Array.from({ length: 5000 }, (_, i) => `${i},n${i}`).join('\n'));
  await assert.rejects(
    parse(pieces(gz.subarray(0, gz.length - 100), 1000), 'csv'),
    (err: unknown) => err instanceof InputFailure && /compressed file is truncated/.test(err.message),
  );
  const corrupt = Buffer.from(gz);
  corrupt.fill(0x55, 40, 80);
  await assert.rejects(
    parse(pieces(corrupt, 1000), 'csv'),
    (err: unknown) =>
      err instanceof InputFailure && /compressed file is (corrupt|truncated)/.test(err.message),
  );
});

test('a gzip stream that inflates past the limit fails saying so', async () => {
  const text = 'id,name\n' + '1,' + 'a'.repeat(200_000) + '\n';
  const gz = gzipSync(text);
  assert.ok(gz.length < 2000);
  await assert.rejects(
    parse(pieces(gz, 512), 'csv', { maxInflatedBytes: 100_000 }),
    (err: unknown) => err instanceof InputFailure && /inflates to more than 100000 bytes/.test(err.message),
  );
  // At the limit it loads; an uncompressed file is bounded by the upload limit, not this one.
  assert.equal((await parse(pieces(gz, 512), 'csv', { maxInflatedBytes: text.length })).rows.length, 1);
  assert.equal((await parse(pieces(Buffer.from(text), 512), 'csv', { maxInflatedBytes: 10 })).rows.length, 1);
});
