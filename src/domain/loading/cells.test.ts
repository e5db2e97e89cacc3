import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COLUMN_TYPES, describeBadJson, describeBadText } from '../datasets/column-types.js';
import { parseDate, parseDatetime } from './temporal.js';

test('integers from text: numbers when safe, bigint beyond 2^53, refused beyond 64 bits', () => {
  const int = COLUMN_TYPES.integer.fromText;
  assert.equal(int('42'), 42);
  assert.equal(int('-7'), -7);
  assert.equal(int('+7'), 7);
  assert.equal(int('-0'), 0);
  assert.equal(int('007'), 7);
  assert.equal(int('9007199254740991'), 9007199254740991);
  assert.equal(int('9007199254740993'), 9007199254740993n);
  assert.equal(int('-9223372036854775808'), -9223372036854775808n);
  assert.equal(int('9223372036854775807'), 9223372036854775807n);
  for (const bad of ['9223372036854775808', '1.0', '1e3', ' 1', '0x10', '-', '+', 'abc', '１']) {
    assert.equal(int(bad), undefined, bad);
  }
  assert.match(describeBadText('integer', '9223372036854775808'), /64-bit integer range/);
  assert.match(describeBadText('integer', 'abc'), /"abc" is not an integer/);
});

test('booleans, numbers and strings from text', () => {
  const bool = COLUMN_TYPES.boolean.fromText;
  for (const t of ['true', 'TRUE', 'True', '1']) assert.equal(bool(t), true, t);
  for (const f of ['false', 'FALSE', 'False', '0']) assert.equal(bool(f), false, f);
  for (const bad of ['yes', 't', '2', ' true']) assert.equal(bool(bad), undefined, bad);

  const num = COLUMN_TYPES.number.fromText;
  for (const [text, value] of [
    ['1.5', 1.5],
    ['-0.1', -0.1],
    ['.5', 0.5],
    ['5.', 5],
    ['+3', 3],
    ['1e3', 1000],
    ['-2.5E-2', -0.025],
    ['123456789.123456789', Number('123456789.123456789')],
    ['0.1234567890123456789', Number('0.1234567890123456789')],
  ] as const) {
    assert.equal(num(text), value, text);
  }
  // The hand-written fast path must round exactly as Number() does.
  for (let i = 0; i < 2000; i++) {
    const text = (Math.random() * 10 ** ((i % 12) - 3)).toFixed(i % 9);
    assert.equal(num(text), Number(text), text);
  }
  for (const bad of [
    'NaN',
    'Infinity',
    '-Infinity',
    '1e999',
    '0x10',
    '0b1',
    ' 1',
    '1 ',
    '1,5',
    '.',
    '-',
    '1e',
    '1.2.3',
  ]) {
    assert.equal(num(bad), undefined, bad);
  }
  assert.equal(COLUMN_TYPES.string.fromText(' kept as is '), ' kept as is ');
});

test('dates must be real calendar dates', () => {
  assert.equal(parseDate('2024-02-29'), '2024-02-29');
  assert.equal(parseDate('2000-02-29'), '2000-02-29');
  for (const bad of [
    '2023-02-29',
    '1900-02-29',
    '2024-13-01',
    '2024-00-10',
    '2024-04-31',
    '0000-01-01',
    '2024-1-01',
    '24-01-01',
  ]) {
    assert.equal(parseDate(bad), undefined, bad);
  }
  assert.match(describeBadText('date', '2023-02-29'), /not a real calendar date/);
});

test('datetimes are normalised to UTC with six fractional digits', () => {
  const cases: [string, string][] = [
    ['2024-08-21T23:16:34.230069', '2024-08-21T23:16:34.230069'],
    ['2024-08-21T23:16:34.230069Z', '2024-08-21T23:16:34.230069'],
    ['2024-08-21T23:16:34Z', '2024-08-21T23:16:34.000000'],
    ['2024-08-21 23:16:34.5', '2024-08-21T23:16:34.500000'],
    ['2024-08-21T23:16:34.123456789Z', '2024-08-21T23:16:34.123456'],
    ['2024-08-21T23:16', '2024-08-21T23:16:00.000000'],
    ['2024-08-21', '2024-08-21T00:00:00.000000'],
    ['2024-08-21T23:16:34+02:00', '2024-08-21T21:16:34.000000'],
    ['2024-08-21T23:16:34.25-0130', '2024-08-22T00:46:34.250000'],
    ['2024-12-31T23:30:00-01', '2025-01-01T00:30:00.000000'],
    ['0050-01-01T00:30:00+01:00', '0049-12-31T23:30:00.000000'],
  ];
  for (const [text, expected] of cases) assert.equal(parseDatetime(text), expected, text);
  for (const bad of [
    '2024-02-30T00:00:00',
    '2024-08-21T24:00:00',
    '2024-08-21T23:60:00',
    '2024-08-21T23:16:34.',
    'yesterday',
    '2024-08-21T23:16:34+25:00',
    '0001-01-01T00:00:00+01:00',
  ]) {
    assert.equal(parseDatetime(bad), undefined, bad);
  }
});

test('JSON values must already have the schema type', () => {
  assert.equal(COLUMN_TYPES.integer.fromJson(12), 12);
  assert.equal(COLUMN_TYPES.integer.fromJson('9223372036854775807'), 9223372036854775807n);
  assert.equal(COLUMN_TYPES.integer.fromJson('12'), 12);
  assert.equal(COLUMN_TYPES.integer.fromJson(1.5), undefined);
  assert.equal(COLUMN_TYPES.integer.fromJson(2 ** 60), undefined);
  assert.match(describeBadJson('integer', 2 ** 60), /string of digits/);
  assert.equal(COLUMN_TYPES.integer.fromJson('1e3'), undefined);
  assert.equal(COLUMN_TYPES.boolean.fromJson(true), true);
  assert.equal(COLUMN_TYPES.boolean.fromJson('true'), undefined);
  assert.equal(COLUMN_TYPES.string.fromJson(5), undefined);
  assert.equal(COLUMN_TYPES.number.fromJson(5), 5);
  assert.equal(COLUMN_TYPES.number.fromJson('5'), undefined);
  assert.equal(COLUMN_TYPES.date.fromJson('2024-01-31'), '2024-01-31');
  assert.equal(COLUMN_TYPES.datetime.fromJson('2024-01-31T10:00:00Z'), '2024-01-31T10:00:00.000000');
  assert.equal(describeBadJson('string', { a: 1 }), 'expected a string, got an object');
  assert.equal(describeBadJson('boolean', 'yes'), 'expected true or false, got "yes"');
});
