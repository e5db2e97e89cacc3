// What each load mode asks of the dataset and does to its records: one entry per mode, checked by
// the request (requests.ts), by the job when it starts (load/load-records.ts) and at its commit
// (load/commit.ts). A mode added to LOAD_MODES does not compile until it has its entry here.
import type { DatasetRow } from '../../storage/db/tables.js';
import { problem, type CodeOf } from '../../errors.js';
import type { RecordFields } from '../loading/index.js';
import { DatasetChangedMeanwhile, JobFailure } from './load/failure.js';
import type { LoadMode } from './status.js';

/** What a mode needs the dataset to be, at every step of the job. */
export type DatasetRequirement =
  /** Any dataset, whatever it holds. */
  | { kind: 'any' }
  /** No records when asked, none when the job starts, and no load committed in between (the
   * generation the job started from is still the dataset's at commit). */
  | {
      kind: 'empty';
      /** Why a dataset holding records refuses the mode (the request's 409, the job's failure). */
      holdsRecords: string;
      /** Why the job fails when another load committed while it ran. */
      loadedMeanwhile: string;
    }
  /** A primary key in the dataset's schema (which never changes once defined). */
  | {
      kind: 'primaryKey';
      /** Why a dataset without one refuses the mode (the request's 409, the job's failure). */
      noPrimaryKey: string;
    };

/** What the load does to the records the dataset holds; the commit (load/commit.ts) switches on it
 * to set the dataset's records. */
export type ExistingRecords =
  /** The loaded file becomes all of the dataset's records (a new generation's table). */
  | 'replaced'
  /** They stay, and the file's records follow them; a file record whose primary key the dataset
   * already holds is a row error and is not loaded. */
  | 'kept'
  /** They stay, except those whose primary key a file record has: that record replaces them. */
  | 'replacedByKey'
  /** They stay, except those whose primary key the file lists: they are deleted. The file holds
   * primary-key values only; a key the dataset does not hold is counted (keysNotFound), not an error. */
  | 'deletedByKey';

export interface LoadModePolicy {
  requires: DatasetRequirement;
  existingRecords: ExistingRecords;
}

export const LOAD_MODE_POLICY: Record<LoadMode, LoadModePolicy> = {
  create: {
    requires: {
      kind: 'empty',
      holdsRecords: 'The dataset already holds records; use mode=replace to replace them.',
      loadedMeanwhile:
        'Records were loaded into the dataset while this job ran; mode=create needs an empty dataset.',
    },
    existingRecords: 'replaced',
  },
  replace: { requires: { kind: 'any' }, existingRecords: 'replaced' },
  append: { requires: { kind: 'any' }, existingRecords: 'kept' },
  upsert: {
    requires: {
      kind: 'primaryKey',
      noPrimaryKey:
        'mode=upsert replaces records by their primary key, and this dataset has none; use mode=append or mode=replace.',
    },
    existingRecords: 'replacedByKey',
  },
  delete: {
    requires: {
      kind: 'primaryKey',
      noPrimaryKey:
        'mode=delete removes records by their primary key, and this dataset has none; use mode=replace with the records to keep.',
    },
    existingRecords: 'deletedByKey',
  },
};

/** Whether the job's table starts as a copy of the dataset's current records (those it keeps);
 * such a job commits only onto the generation it copied. */
export function buildsOnCurrentRecords(mode: LoadMode): boolean {
  switch (LOAD_MODE_POLICY[mode].existingRecords) {
    case 'replaced':
      return false;
    case 'kept':
    case 'replacedByKey':
    case 'deletedByKey':
      return true;
  }
}

/** Whether a file record whose primary key the dataset already holds is a row error. */
export function heldKeysAreRowErrors(mode: LoadMode): boolean {
  switch (LOAD_MODE_POLICY[mode].existingRecords) {
    case 'kept':
      return true;
    case 'replaced':
    case 'replacedByKey':
    case 'deletedByKey':
      return false;
  }
}

/** What the file's records hold: whole records, or the primary-key values of records to delete. */
export function fileFields(mode: LoadMode): RecordFields {
  switch (LOAD_MODE_POLICY[mode].existingRecords) {
    case 'replaced':
    case 'kept':
    case 'replacedByKey':
      return 'properties';
    case 'deletedByKey':
      return 'primaryKey';
  }
}

/** The row error of a file record whose primary key the dataset already holds (mode=append). */
export function heldKeyMessage(key: Record<string, unknown>): string {
  const shown = Object.entries(key)
    .map(([name, value]) => `${name}=${shorten(String(value))}`)
    .join(', ');
  return `The dataset already holds a record with primary key ${shown}; mode=append only adds new records (mode=upsert replaces them).`;
}

const shorten = (text: string) => (text.length > 100 ? `${text.slice(0, 100)}…` : text);

/** The dataset as the checks see it. */
type DatasetState = Pick<DatasetRow, 'record_count' | 'generation'>;
/** What the request and the start check: the records held and the schema's primary key. */
type DatasetNow = Pick<DatasetState, 'record_count'> & { primaryKey: readonly string[] };

/** Refuses a request whose mode the dataset does not allow now (a 409 problem). */
export function checkModeOnRequest(mode: LoadMode, ds: DatasetNow): void {
  const refusal = datasetRefusal(mode, ds);
  if (refusal !== null)
    throw problem('conflict', refusal, { code: REFUSAL_CODES[LOAD_MODE_POLICY[mode].requires.kind] });
}

/** The problem code of a request refused for each requirement ('any' refuses none). */
const REFUSAL_CODES = {
  any: 'conflict',
  empty: 'dataset_not_empty',
  primaryKey: 'dataset_has_no_primary_key',
} as const satisfies Record<DatasetRequirement['kind'], CodeOf<'conflict'>>;

/** Fails a job, as it starts, whose mode the dataset does not allow. */
export function checkModeOnStart(mode: LoadMode, ds: DatasetNow): void {
  const refusal = datasetRefusal(mode, ds);
  if (refusal !== null) throw new JobFailure(refusal);
}

/** Fails a job, at its commit, whose mode the dataset no longer allows; a job built on a copy of
 * records another load has since replaced is sent back to run again (DatasetChangedMeanwhile). */
export function checkModeOnCommit(mode: LoadMode, ds: DatasetState, startGeneration: number): void {
  const refusal = loadedMeanwhileRefusal(mode, ds, startGeneration);
  if (refusal !== null) throw new JobFailure(refusal);
  if (buildsOnCurrentRecords(mode) && ds.generation !== startGeneration) {
    throw new DatasetChangedMeanwhile();
  }
}

function datasetRefusal(mode: LoadMode, ds: DatasetNow): string | null {
  const requires = LOAD_MODE_POLICY[mode].requires;
  switch (requires.kind) {
    case 'any':
      return null;
    case 'empty':
      return Number(ds.record_count) > 0 ? requires.holdsRecords : null;
    case 'primaryKey':
      return ds.primaryKey.length === 0 ? requires.noPrimaryKey : null;
  }
}

function loadedMeanwhileRefusal(mode: LoadMode, ds: DatasetState, startGeneration: number): string | null {
  const requires = LOAD_MODE_POLICY[mode].requires;
  switch (requires.kind) {
    case 'any':
    case 'primaryKey':
      return null;
    case 'empty':
      return Number(ds.record_count) > 0 || ds.generation !== startGeneration
        ? requires.loadedMeanwhile
        : null;
  }
}
