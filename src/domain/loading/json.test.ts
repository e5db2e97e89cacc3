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
    { name: 'at', type: 'datetime', required: false },
  ],
  primaryKey: ['id'],
};

async function parse(
  text: string,
  format: InputFormat = 'json',
  size = 5,
): Promise<{ rows: CellValue[][]; lines: number[]; errors: LoadError[]; rowsRead: number }> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const errors = new ErrorCollector();
  const stats = { rowsRead: 0 };
  const rows: CellValue[][] = [];
  const lines: number[] = [];
  for await (const batch of parseRecords(Readable.from(chunks), { schema, format, errors, stats })) {
    rows.push(...batch.rows);
    lines.push(...batch.lines);
  }
  return { rows, lines, errors: errors.errors, rowsRead: stats.rowsRead };
}

const ARRAY = `[
  {"id": 1, "name": "a, \\"quoted\\" {not a brace}", "active": true, "at": "2024-01-02T03:04:05+01:00"},
  {"id": "9223372036854775807", "name": null},
  {
    "id": 3,
    "active": false,
    "name": "nested \\\\"
  }
]
`;

test('JSON array: typed rows, missing keys are null, lines of each object', async () => {
  for (const size of [1, 5, 64 * 1024]) {
    const r = await parse(ARRAY, 'json', size);
    assert.deepEqual(r.errors, [], `chunks of ${size}`);
    assert.deepEqual(r.rows, [
      [1, 'a, "quoted" {not a brace}', true, '2024-01-02T02:04:05.000000'],
      [9223372036854775807n, null, null, null],
      [3, 'nested \\', false, null],
    ]);
    assert.deepEqual(r.lines, [2, 3, 4], `chunks of ${size}`);
  }
});

test('NDJSON: one object per line, blank lines and CRLF allowed', async () => {
  const r = await parse('{"id":1,"name":"x"}\r\n\n  \n{"id":2,"active":true}\n{"id":3}');
  assert.deepEqual(r.rows, [
    [1, 'x', null, null],
    [2, null, true, null],
    [3, null, null, null],
  ]);
  assert.deepEqual(r.lines, [1, 4, 5]);
  assert.equal(r.rowsRead, 3);
});

test('JSON record defects: wrong types, unknown keys, missing key values, bad syntax', async () => {
  const ndjson = [
    '{"id":1,"name":5}',
    '{"id":2,"extra":1,"active":"true"}',
    '{"name":"no id"}',
    '{"id":9007199254740993}',
    '{"id":4,',
    '[1,2]',
    '{"id":5,"at":"2024-02-30T00:00:00"}',
    '{"id":6}',
  ].join('\n');
  const r = await parse(ndjson);
  assert.deepEqual(
    r.errors.map((e) => [e.line, e.property, e.message.replace(/: .*/, ': …')]),
    [
      [1, 'name', 'expected a string, got 5'],
      [2, 'extra', 'key "extra" is not a property of the dataset'],
      [2, 'active', 'expected true or false, got "true"'],
      [3, 'id', 'a value is required'],
      [
        4,
        'id',
        '9007199254740992 is beyond 2^53 and loses digits as a JSON number; send it as a string of digits',
      ],
      [5, undefined, 'invalid JSON: …'],
      [6, undefined, 'expected a JSON object'],
      [7, 'at', 'expected an ISO 8601 date-time, got "2024-02-30T00:00:00"'],
    ],
  );
  assert.deepEqual(r.rows, [[6, null, null, null]]);
  assert.equal(r.rowsRead, 8);
});

test('JSON array: a malformed object is an error on its line; the others still load', async () => {
  const r = await parse('[{"id":1},\n{"id":2,,},\n{"id":3}]');
  assert.deepEqual(r.rows, [
    [1, null, null, null],
    [3, null, null, null],
  ]);
  assert.equal(r.errors.length, 1);
  assert.equal(r.errors[0]?.line, 2);
  assert.match(r.errors[0]?.message ?? '', /^invalid JSON: /);
});

test('JSON array: structural defects stop the parse with the line', async () => {
  const cases: [string, number, RegExp][] = [
    ['[{"id":1},\n 5]', 2, /expected an object, found "5"/],
    ['[{"id":1}\n{"id":2}]', 2, /expected "," or "\]"/],
    ['[{"id":1},]', 1, /expected an object, found "\]"/],
    ['[{"id":1}]\n[', 2, /expected nothing after the array/],
    ['[{"id":1},\n{"id":2}', 2, /ended before the JSON array was closed/],
    ['[{"id":1},\n{"id":"2', 2, /ended before the JSON array was closed/],
    ['  "text"', 1, /expected a JSON array of objects or newline-delimited JSON objects/],
  ];
  for (const [text, line, message] of cases) {
    const r = await parse(text);
    assert.equal(r.errors.length, 1, text);
    assert.equal(r.errors[0]?.line, line, text);
    assert.match(r.errors[0]?.message ?? '', message, text);
  }
});

test('JSON: an empty array loads nothing, without error', async () => {
  const r = await parse(' [ ] ');
  assert.deepEqual([r.rows, r.errors], [[], []]);
});
