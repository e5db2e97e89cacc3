import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProblemError } from '../../errors.js';
import { DatasetChangedMeanwhile, JobFailure } from './load/failure.js';
import {
  LOAD_MODE_POLICY,
  buildsOnCurrentRecords,
  checkModeOnCommit,
  checkModeOnRequest,
  checkModeOnStart,
  fileFields,
  heldKeyMessage,
  heldKeysAreRowErrors,
  type LoadModePolicy,
} from './load-modes.js';
import { LOAD_MODES, type LoadMode } from './status.js';

const empty = { record_count: 0, generation: 3, primaryKey: ['id'] };
const full = { record_count: 5, generation: 3, primaryKey: ['id'] };
const unkeyed = { record_count: 5, generation: 3, primaryKey: [] };

void describe('load-mode policy', () => {
  it('has one entry per mode, and a mode without one does not compile', () => {
    assert.deepEqual(Object.keys(LOAD_MODE_POLICY).sort(), [...LOAD_MODES].sort());
    // @ts-expect-error a table keyed by more modes than the policy covers is refused
    const withMore: Record<LoadMode | 'notAMode', LoadModePolicy> = LOAD_MODE_POLICY;
    assert.ok(withMore);
  });

  it('create: refuses a dataset with records when asked (409) and when the job starts', () => {
    const message = 'The dataset already holds records; use mode=replace to replace them.';
    assert.throws(
      () => checkModeOnRequest('create', full),
      (err: unknown) => err instanceof ProblemError && err.kind === 'conflict' && err.detail === message,
    );
    assert.throws(
      () => checkModeOnStart('create', full),
      (err: unknown) => err instanceof JobFailure && err.message === message && err.errorData === null,
    );
    checkModeOnRequest('create', empty);
    checkModeOnStart('create', empty);
  });

  it('create: fails at commit when records arrived or another load committed meanwhile', () => {
    const message =
      'Records were loaded into the dataset while this job ran; mode=create needs an empty dataset.';
    const refused = (err: unknown) => err instanceof JobFailure && err.message === message;
    assert.throws(() => checkModeOnCommit('create', full, 3), refused);
    assert.throws(() => checkModeOnCommit('create', { record_count: 0, generation: 4 }, 3), refused);
    checkModeOnCommit('create', empty, 3);
  });

  it('replace: takes any dataset at every step', () => {
    checkModeOnRequest('replace', full);
    checkModeOnStart('replace', full);
    checkModeOnCommit('replace', { record_count: 7, generation: 9 }, 3);
  });

  it('create and replace both replace the records the dataset held', () => {
    assert.equal(LOAD_MODE_POLICY.create.existingRecords, 'replaced');
    assert.equal(LOAD_MODE_POLICY.replace.existingRecords, 'replaced');
    assert.equal(buildsOnCurrentRecords('create'), false);
    assert.equal(buildsOnCurrentRecords('replace'), false);
  });

  it('append: any dataset, keyed or not; held keys are row errors', () => {
    for (const ds of [empty, full, unkeyed]) {
      checkModeOnRequest('append', ds);
      checkModeOnStart('append', ds);
    }
    assert.equal(buildsOnCurrentRecords('append'), true);
    assert.equal(heldKeysAreRowErrors('append'), true);
    assert.equal(heldKeysAreRowErrors('upsert'), false);
    assert.match(heldKeyMessage({ id: 42n, region: 'eu' }), /primary key id=42, region=eu;/);
    assert.match(heldKeyMessage({ id: 'x'.repeat(500) }), /id=x{100}…;/);
  });

  it('upsert: refuses a dataset without a primary key when asked (409) and when the job starts', () => {
    const message =
      'mode=upsert replaces records by their primary key, and this dataset has none; use mode=append or mode=replace.';
    assert.throws(
      () => checkModeOnRequest('upsert', unkeyed),
      (err: unknown) => err instanceof ProblemError && err.kind === 'conflict' && err.detail === message,
    );
    assert.throws(
      () => checkModeOnStart('upsert', unkeyed),
      (err: unknown) => err instanceof JobFailure && err.message === message,
    );
    checkModeOnRequest('upsert', full);
    checkModeOnStart('upsert', empty);
    assert.equal(buildsOnCurrentRecords('upsert'), true);
  });

  it('delete: refuses a dataset without a primary key (409, and a job failure); builds on the records; reads keys only', () => {
    const message =
      'mode=delete removes records by their primary key, and this dataset has none; use mode=replace with the records to keep.';
    assert.deepEqual(LOAD_MODE_POLICY.delete, {
      requires: { kind: 'primaryKey', noPrimaryKey: message },
      existingRecords: 'deletedByKey',
    });
    assert.throws(
      () => checkModeOnRequest('delete', unkeyed),
      (err: unknown) =>
        err instanceof ProblemError &&
        err.kind === 'conflict' &&
        err.detail === message &&
        err.code === 'dataset_has_no_primary_key',
    );
    assert.throws(
      () => checkModeOnStart('delete', unkeyed),
      (err: unknown) => err instanceof JobFailure && err.message === message && err.errorData === null,
    );
    for (const ds of [empty, full]) {
      checkModeOnRequest('delete', ds);
      checkModeOnStart('delete', ds);
    }
    assert.equal(buildsOnCurrentRecords('delete'), true);
    assert.equal(heldKeysAreRowErrors('delete'), false, 'a held key is what a delete is for');
    assert.equal(fileFields('delete'), 'primaryKey');
    for (const mode of ['create', 'replace', 'append', 'upsert'] as const) {
      assert.equal(fileFields(mode), 'properties', mode);
    }
  });

  it('append, upsert and delete commit only onto the generation they copied, else run again', () => {
    for (const mode of ['append', 'upsert', 'delete'] as const) {
      checkModeOnCommit(mode, { record_count: 9, generation: 3 }, 3);
      assert.throws(
        () => checkModeOnCommit(mode, { record_count: 9, generation: 4 }, 3),
        DatasetChangedMeanwhile,
      );
    }
  });
});
