import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SchemaProperty } from '../datasets/schema.js';
import { csvHeader, recordCsv, recordJson } from './render.js';
import { decodePageToken, encodePageToken, parseFilters } from './query.js';

const props: SchemaProperty[] = [
  { name: 'id', type: 'integer', required: true },
  { name: 'name', type: 'string', required: false },
  { name: 'ok', type: 'boolean', required: false },
  { name: 'x', type: 'number', required: false },
];

describe('record rendering', () => {
  it('writes 64-bit integers digit for digit in JSON', () => {
    assert.equal(
      recordJson(props, ['9223372036854775807', 'a "q"', true, 1.5]),
      '{"id":9223372036854775807,"name":"a \\"q\\"","ok":true,"x":1.5}',
    );
    assert.equal(recordJson(props, ['-1', null, null, null]), '{"id":-1,"name":null,"ok":null,"x":null}');
  });

  it('writes RFC 4180 CSV', () => {
    assert.equal(csvHeader(props), 'id,name,ok,x\r\n');
    assert.equal(recordCsv(['1', 'a,"b"\nc', false, null]), '1,"a,""b""\nc",false,\r\n');
  });
});

describe('record queries', () => {
  it('round-trips page tokens and refuses garbage', () => {
    const t = encodePageToken({ g: 3, k: ['12', 'x'] });
    assert.deepEqual(decodePageToken(t, 2), { g: 3, k: ['12', 'x'] });
    assert.throws(() => decodePageToken(t, 1), /pageToken/);
    assert.throws(() => decodePageToken('!!!', 1), /pageToken/);
  });

  it('types filters and names unknown properties', () => {
    const schema = { properties: props, primaryKey: ['id'] };
    assert.deepEqual(parseFilters(schema, { id: '9007199254740993', ok: 'TRUE', pageSize: '5' }), [
      ['id', 9007199254740993n],
      ['ok', true],
    ]);
    assert.deepEqual(parseFilters(schema, { ok: 'false' }), [['ok', false]]);
    assert.throws(
      () => parseFilters(schema, { nope: '1' }),
      (e: { errors: object }) => 'nope' in e.errors,
    );
    assert.throws(() => parseFilters(schema, { id: '99999999999999999999' }), /invalid/);
    assert.throws(() => parseFilters(schema, { x: 'abc' }), /invalid/);
  });
});
