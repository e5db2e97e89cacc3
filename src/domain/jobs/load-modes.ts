// What each load mode asks of the dataset and does to its records: one entry per mode, checked by
// the request (requests.ts), by the job when it starts (load/load-records.ts) and at its commit
// (load/commit.ts). A mode added to LOAD_MODES does not compile until it has its entry here.
import type { DatasetRow } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { JobFailure } from './load/failure.js';
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
    };

/** What the load does to the records the dataset holds; the commit (load/commit.ts) switches on it
 * to set the dataset's records. */
export type ExistingRecords =
  /** The loaded file becomes all of the dataset's records (a new generation's table). */
  'replaced';

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
};

/** The dataset as the checks see it. */
type DatasetState = Pick<DatasetRow, 'record_count' | 'generation'>;

/** Refuses a request whose mode the dataset does not allow now (a 409 problem). */
export function checkModeOnRequest(mode: LoadMode, ds: Pick<DatasetState, 'record_count'>): void {
  const refusal = holdsRecordsRefusal(mode, ds);
  if (refusal !== null) throw problem('conflict', refusal);
}

/** Fails a job, as it starts, whose mode the dataset does not allow. */
export function checkModeOnStart(mode: LoadMode, ds: Pick<DatasetState, 'record_count'>): void {
  const refusal = holdsRecordsRefusal(mode, ds);
  if (refusal !== null) throw new JobFailure(refusal);
}

/** Fails a job, at its commit, whose mode the dataset no longer allows. */
export function checkModeOnCommit(mode: LoadMode, ds: DatasetState, startGeneration: number): void {
  const refusal = loadedMeanwhileRefusal(mode, ds, startGeneration);
  if (refusal !== null) throw new JobFailure(refusal);
}

function holdsRecordsRefusal(mode: LoadMode, ds: Pick<DatasetState, 'record_count'>): string | null {
  const requires = LOAD_MODE_POLICY[mode].requires;
  switch (requires.kind) {
    case 'any':
      return null;
    case 'empty':
      return Number(ds.record_count) > 0 ? requires.holdsRecords : null;
  }
}

function loadedMeanwhileRefusal(mode: LoadMode, ds: DatasetState, startGeneration: number): string | null {
  const requires = LOAD_MODE_POLICY[mode].requires;
  switch (requires.kind) {
    case 'any':
      return null;
    case 'empty':
      return Number(ds.record_count) > 0 || ds.generation !== startGeneration
        ? requires.loadedMeanwhile
        : null;
  }
}
