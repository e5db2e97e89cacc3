import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProblemError } from '../../errors.js';
import { parseDatetime } from '../loading/temporal.js';
import { WIDENINGS } from './column-types.js';
import { planSchemaChange, type SchemaUpdateInput } from './schema-change.js';
import type { DatasetSchema } from './schema.js';

const CURRENT: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'a', type: 'string', required: true },
    { name: 'b', type: 'integer', required: false },
  ],
  primaryKey: ['id'],
};
const ID = { name: 'id', type: 'integer', required: true };

/** The problem a plan throws (a test failure when it throws none or something else). */
function refusal(input: SchemaUpdateInput): ProblemError {
  try {
    planSchemaChange(CURRENT, input);
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  assert.fail('the change was accepted');
}

describe('planning a schema change', () => {
  it('finds no change in the same schema, the primary key left out or not', () => {
    assert.deepEqual(planSchemaChange(CURRENT, CURRENT).changes, []);
    assert.deepEqual(planSchemaChange(CURRENT, { properties: CURRENT.properties }).changes, []);
  });

  it('swaps two names by renaming each from the other, values following their property', () => {
    const plan = planSchemaChange(CURRENT, {
      properties: [
        ID,
        { name: 'b', type: 'string', required: true, renamedFrom: 'a' },
        { name: 'a', type: 'number', renamedFrom: 'b' },
      ],
    });
    assert.deepEqual(plan.changes, [
      { kind: 'renamed', property: 'b', from: 'a' },
      { kind: 'renamed', property: 'a', from: 'b' },
      { kind: 'widened', property: 'a', from: 'integer', to: 'number' },
    ]);
    assert.deepEqual(plan.sources, [
      { from: 'property', name: 'id', type: 'integer' },
      { from: 'property', name: 'a', type: 'string' },
      { from: 'property', name: 'b', type: 'integer' },
    ]);
  });

  it('parses a default as its type parses JSON, and drops what is left out', () => {
    const plan = planSchemaChange(CURRENT, {
      properties: [ID, { name: 'big', type: 'integer', required: true, default: '9007199254740993' }],
    });
    assert.deepEqual(plan.changes, [
      { kind: 'added', property: 'big', type: 'integer', required: true, default: 9007199254740993n },
      { kind: 'dropped', property: 'a' },
      { kind: 'dropped', property: 'b' },
    ]);
  });

  it('refuses key changes, narrowing and made-required with their codes, and unclear requests with 400', () => {
    assert.equal(refusal({ properties: CURRENT.properties, primaryKey: [] }).code, 'primary_key_change');
    assert.equal(
      refusal({ properties: [{ ...ID, type: 'number' }, ...CURRENT.properties.slice(1)] }).code,
      'primary_key_change',
    );
    assert.equal(refusal({ properties: [ID, { name: 'a', type: 'date' }] }).code, 'type_narrowing');
    assert.equal(
      refusal({ properties: [ID, { name: 'b', type: 'integer', required: true }] }).code,
      'property_made_required',
    );
    const twice = refusal({
      properties: [
        ID,
        { name: 'x', type: 'string', renamedFrom: 'a' },
        { name: 'y', type: 'string', renamedFrom: 'a' },
      ],
    });
    assert.equal(twice.status, 400);
    assert.deepEqual(Object.keys(twice.errors), ['schema.properties[2].renamedFrom']);
  });

  it('widens a date to the datetime its day starts with, as a file would give it', () => {
    const copy = WIDENINGS.date?.datetime?.copy('d');
    assert.ok(copy?.from === 'columnWithSuffix');
    assert.equal(`2024-02-29${copy.suffix}`, parseDatetime('2024-02-29T00:00:00Z'));
  });
});
