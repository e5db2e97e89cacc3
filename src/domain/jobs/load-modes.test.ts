import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProblemError } from '../../errors.js';
import { JobFailure } from './load/failure.js';
import {
  LOAD_MODE_POLICY,
  checkModeOnCommit,
  checkModeOnRequest,
  checkModeOnStart,
  type LoadModePolicy,
} from './load-modes.js';
import { LOAD_MODES, type LoadMode } from './status.js';

const empty = { record_count: 0, generation: 3 };
const full = { record_count: 5, generation: 3 };

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
  });
});
