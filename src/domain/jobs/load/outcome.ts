// What a load's log says: the counts each mode reports of the dataset's records, and the message of
// a completed or failed load (docs/loading.md, "Load modes").
import type { StagingResult } from '../../../storage/records/index.js';
import type { ErrorCollector, ParseStats } from '../../loading/index.js';
import { fileFields, LOAD_MODE_POLICY } from '../load-modes.js';
import type { LoadOptions } from '../load-options.js';
import type { LoadMode, LogData } from '../status.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** append, upsert: the file's records new to the dataset, and the held records they replaced. */
function addedAndReplaced(result: StagingResult) {
  return {
    recordsAdded: result.rowsWritten - result.duplicatesCollapsed - result.rowsReplaced,
    recordsReplaced: result.rowsReplaced,
  };
}

/** delete: the records deleted, and the file's distinct keys that matched none (each distinct key
 * deleted one record or none). */
function deletedAndNotFound(result: StagingResult) {
  return {
    recordsDeleted: result.rowsDeleted,
    keysNotFound: result.rowsWritten - result.duplicatesCollapsed - result.rowsDeleted,
  };
}

/** The counts of what the file did to the records the dataset held, by what the mode does to them. */
export function recordChanges(
  mode: LoadMode,
  result: StagingResult,
): Pick<LogData, 'recordsAdded' | 'recordsReplaced' | 'recordsDeleted' | 'keysNotFound'> {
  switch (LOAD_MODE_POLICY[mode].existingRecords) {
    case 'replaced':
      return {};
    case 'kept':
    case 'replacedByKey':
      return addedAndReplaced(result);
    case 'deletedByKey':
      return deletedAndNotFound(result);
  }
}

/** The records a completed load wrote into its dataset: every record a replace left there, the
 * records an append or upsert added or replaced, none for a delete (dx_job_rows_loaded_total). */
export function recordsWritten(mode: LoadMode, log: LogData): number {
  switch (LOAD_MODE_POLICY[mode].existingRecords) {
    case 'replaced':
      return log.rowsLoaded ?? 0;
    case 'kept':
    case 'replacedByKey':
      return (log.recordsAdded ?? 0) + (log.recordsReplaced ?? 0);
    case 'deletedByKey':
      return 0;
  }
}

/** What a completed load did (or, for a dry run, would have done). */
export function completedMessage(
  mode: LoadMode,
  result: StagingResult,
  rowsRejected: number,
  options: LoadOptions,
): string {
  const dry = options.dryRun;
  const leftOut =
    rowsRejected > 0
      ? ` ${plural(rowsRejected, 'record')} with defects ${dry ? 'would be' : rowsRejected === 1 ? 'was' : 'were'} left out (maxBadRecords=${options.maxBadRecords}).`
      : '';
  const unchanged = dry ? ' Nothing was changed.' : '';
  const holds = dry
    ? `the dataset would hold ${result.rowsLoaded}`
    : `the dataset holds ${result.rowsLoaded}`;
  switch (LOAD_MODE_POLICY[mode].existingRecords) {
    case 'replaced':
      return dry
        ? `Dry run: ${plural(result.rowsLoaded, 'record')} would have been loaded.${leftOut}${unchanged}`
        : `Loaded ${plural(result.rowsLoaded, 'record')}.${leftOut}`;
    case 'kept':
    case 'replacedByKey': {
      const { recordsAdded, recordsReplaced } = addedAndReplaced(result);
      const did = dry
        ? `Dry run: ${recordsAdded} records would have been added and ${recordsReplaced} replaced`
        : `Added ${recordsAdded} records and replaced ${recordsReplaced}`;
      return `${did}; ${holds}.${leftOut}${unchanged}`;
    }
    case 'deletedByKey': {
      const { recordsDeleted, keysNotFound } = deletedAndNotFound(result);
      const deleted = plural(recordsDeleted, 'record');
      const did = dry ? `Dry run: ${deleted} would have been deleted` : `Deleted ${deleted}`;
      return `${did}; ${plural(keysNotFound, 'key')} matched no record; ${holds}.${leftOut}${unchanged}`;
    }
  }
}

/** Why the load failed on the file's defects. */
export function failureMessage(
  mode: LoadMode,
  errors: ErrorCollector,
  stats: ParseStats,
  options: LoadOptions,
): string {
  const prefix = options.dryRun ? 'Dry run: ' : '';
  const found = `The file has ${plural(errors.count, 'defect')}`;
  const nothing = fileFields(mode) === 'primaryKey' ? 'nothing was deleted' : 'nothing was loaded';
  if (errors.fileErrors > 0 || options.maxBadRecords === 0) {
    return `${prefix}${found} in ${stats.rowsRead} records read; ${nothing}.`;
  }
  return (
    `${prefix}${found} in ${errors.rowsRejected} of ${stats.rowsRead} records read, more bad ` +
    `records than maxBadRecords=${options.maxBadRecords}; ${nothing}.`
  );
}
