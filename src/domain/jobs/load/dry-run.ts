// The end of a dry run: everything a real load does up to its commit has run (the staging table
// was written and finished, so the counts are exact); the table was dropped instead of swapped
// in. The job still ends as the commit would end it: the mode is checked against the dataset as
// it is now, and the Completed move is made by the lease holder alone.
import type { Kysely } from 'kysely';
import type { Tables } from '../../../storage/db/tables.js';
import { checkModeOnCommit } from '../load-modes.js';
import { completeUnderLease, type CommitRequest } from './commit.js';
import { JobFailure } from './failure.js';

/** Completes a dry-run job without touching its dataset (generation, records, dates). */
export async function completeDryRun(
  db: Kysely<Tables>,
  req: Omit<CommitRequest, 'table' | 'rowsLoaded'>,
): Promise<void> {
  const ds = await db
    .selectFrom('datasets')
    .select(['generation', 'record_count'])
    .where('id', '=', req.datasetId)
    .executeTakeFirst();
  if (ds === undefined) throw new JobFailure('The dataset was deleted while loading.');
  checkModeOnCommit(req.mode, ds, req.startGeneration);
  await db.transaction().execute((trx) => completeUnderLease(trx, req));
}
