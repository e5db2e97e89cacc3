import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { DatasetSchema } from '../datasets/schema.js';
import { ERROR_BACKLOG_LIMIT, MAX_ORIGINAL_TEXT_CHARS } from './errors.js';
import { ErrorCollector, parseRecords, type CollectedError, type InputFormat } from './index.js';

const schema: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string', required: false },
    { name: 'active', type: 'boolean', required: false },
  ],
  primaryKey: ['id'],
};

/** Parses `text` fed in `size`-byte chunks, taking the collected errors after every batch as the
 * load job does; returns them with the collector and the sizes of the batches. */
async function collect(text: string, format: InputFormat, size = 7) {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const errors = new ErrorCollector();
  const taken: CollectedError[] = [];
  const batches: number[] = [];
  let largestBacklog = 0;
  for await (const batch of parseRecords(Readable.from(chunks), { schema, format, errors })) {
    batches.push(batch.rows.length);
    largestBacklog = Math.max(largestBacklog, errors.backlog);
    taken.push(...errors.take());
  }
  taken.push(...errors.take());
  return { errors, taken, batches, largestBacklog };
}

/** Each defect as [line, property, originalText] (null: the text is on the record's first defect). */
const summary = (taken: CollectedError[]) => taken.map((e) => [e.line, e.property ?? '', e.originalText]);

test('CSV: each bad record keeps its text as read, multi-line and CRLF records too', async () => {
  const text = 'id,name,active\r\n1,a,true\r\nx,,maybe\r\n3,"two\r\nlines",nope\r\n\r\n4,d,1,extra\r\n5,e,0';
  const { errors, taken } = await collect(text, 'csv');
  assert.deepEqual(summary(taken), [
    [3, 'id', 'x,,maybe'],
    [3, 'active', null],
    [4, 'active', '3,"two\r\nlines",nope'],
    [7, '', '4,d,1,extra'],
  ]);
  assert.deepEqual(
    taken.map((e) => e.seq),
    [1, 2, 3, 4],
  );
  assert.equal(errors.count, 4);
  assert.equal(errors.rowsRejected, 3);
  assert.equal(errors.fileErrors, 0);
});

test('CSV: the text is found whatever the chunk size', async () => {
  let text = 'id,name,active\n';
  for (let i = 0; i < 50; i++) text += i % 7 === 3 ? `${i},"q\n${i}",bad${i}\n` : `${i},n${i},true\n`;
  const expected = (await collect(text, 'csv', 1 << 20)).taken;
  assert.equal(expected.length, 7);
  assert.equal(expected[0]?.originalText, '3,"q\n3",bad3');
  for (const size of [1, 3, 64])
    assert.deepEqual((await collect(text, 'csv', size)).taken, expected, `${size}`);
});

test('header and structure defects are file errors: never tolerated, not bad records', async () => {
  const header = await collect('id,name,active,extra\n1,a,true,z\n', 'csv');
  assert.equal(header.errors.fileErrors, 1);
  assert.equal(header.errors.rowsRejected, 0);
  assert.deepEqual(summary(header.taken), [[1, 'extra', '']]);
  const unclosed = await collect('id,name,active\n1,ok,1\n2,"never closed,1\n3,x,1\n', 'csv');
  assert.equal(unclosed.errors.fileErrors, 1);
  assert.equal(unclosed.taken[0]?.line, 3);
  const array = await collect('[{"id": 1}, {"id": "x"}', 'json');
  assert.equal(array.errors.fileErrors, 1);
  assert.equal(array.errors.rowsRejected, 1);
  assert.match(array.taken.at(-1)?.message ?? '', /ended before the JSON array was closed/);
});

test('JSON array: records on one line are told apart; each keeps its own text', async () => {
  const { errors, taken } = await collect(
    '[{"id": "x", "active": 2}, {"id": 2}, {"id": 3, "zz": 1},\n {"id": null}]',
    'json',
  );
  assert.deepEqual(summary(taken), [
    [1, 'id', '{"id": "x", "active": 2}'],
    [1, 'active', null],
    [1, 'zz', '{"id": 3, "zz": 1}'],
    [2, 'id', '{"id": null}'],
  ]);
  assert.equal(errors.rowsRejected, 3);
});

test('NDJSON: the line is the text; a syntax error too', async () => {
  const { errors, taken } = await collect('{"id": 1}\n{"id": 2, "active": "no"}\r\n\n{"id": 3,\n', 'json');
  assert.deepEqual(summary(taken), [
    [2, 'active', '{"id": 2, "active": "no"}'],
    [4, '', '{"id": 3,'],
  ]);
  assert.equal(errors.rowsRejected, 2);
});

test('a long record text is cut; calls without a record each count as a bad row', () => {
  const errors = new ErrorCollector();
  errors.add({ line: 5, property: 'id', message: 'taken' }, 'y'.repeat(MAX_ORIGINAL_TEXT_CHARS + 10));
  errors.add({ line: 5, property: 'id', message: 'taken' });
  errors.add({ line: 6, message: 'a' }, 'r', 9);
  errors.add({ line: 6, message: 'b' }, 'r', 9);
  const taken = errors.take();
  assert.equal(taken[0]?.originalText?.length, MAX_ORIGINAL_TEXT_CHARS);
  assert.deepEqual(
    taken.map((e) => e.originalText?.length ?? null),
    [MAX_ORIGINAL_TEXT_CHARS, 0, 1, null],
  );
  assert.equal(errors.rowsRejected, 3);
  assert.equal(errors.count, 4);
  assert.deepEqual(errors.take(), []);
});

test('a file of bad records is handed out in small pieces: the backlog stays bounded', async () => {
  let text = 'id,name,active\n';
  for (let i = 0; i < 5 * ERROR_BACKLOG_LIMIT; i++) text += `${i},n,nope\n`;
  const { errors, taken, batches, largestBacklog } = await collect(text, 'csv', 64 * 1024);
  assert.equal(taken.length, 5 * ERROR_BACKLOG_LIMIT);
  assert.equal(errors.rowsRejected, 5 * ERROR_BACKLOG_LIMIT);
  assert.ok(batches.length >= 5, `${batches.length} batches`);
  assert.ok(
    batches.every((n) => n === 0),
    'no rows',
  );
  assert.ok(largestBacklog <= ERROR_BACKLOG_LIMIT, `${largestBacklog}`);
  assert.deepEqual(
    taken.map((e) => e.line),
    Array.from({ length: 5 * ERROR_BACKLOG_LIMIT }, (_, i) => i + 2),
  );
});
