// A dataset's records change by generations: a new records table, complete before it is seen,
// swapped in with the dataset's row in one transaction. A load's commit (jobs/load/commit.ts) and a
// schema change (change-schema.ts) both swap through here, so readers see all old or all new.
import type { Updateable } from 'kysely';
import type { DatasetRow, DatasetsTable } from '../../storage/db/tables.js';
import type { Db } from '../identity/users.js';

/** A generation swap: the dataset as read, the table that becomes its records, and what else its
 * row gets (its count and dates; a schema change, its version). */
export interface GenerationSwap {
  datasetId: string;
  from: Pick<DatasetRow, 'generation' | 'records_table'>;
  /** The new records table; the current one when only the row changes. */
  table: string | null;
  set: Updateable<DatasetsTable>;
}

/**
 * The swap, inside `trx` (a load's commit, a schema change): the dataset's row gets the next
 * generation and `set` if its generation is still `from`'s, and the table it held goes to the
 * retirement ledger (the sweep drops it once no reader or link needs it). False when the
 * generation moved (nothing was changed): the caller reads again or gives up.
 */
export async function swapGeneration(trx: Db, swap: GenerationSwap): Promise<boolean> {
  const res = await trx
    .updateTable('datasets')
    .set({ ...swap.set, records_table: swap.table, generation: swap.from.generation + 1 })
    .where('id', '=', swap.datasetId)
    .where('generation', '=', swap.from.generation)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return false;
  if (swap.from.records_table !== null && swap.from.records_table !== swap.table) {
    await trx
      .insertInto('dataset_retired_tables')
      .values({ table_name: swap.from.records_table, dataset_id: swap.datasetId, retired_at: Date.now() })
      .execute();
  }
  return true;
}

/**
 * A table built outside a job (a schema change's) goes into the retirement ledger before it is
 * built, dated `BUILD_ALLOWANCE_MS` ahead: if the process dies before the swap, the sweep drops it
 * a day later; the swap takes it out of the ledger (`keepBuiltTable`, in the swap's transaction).
 */
export const BUILD_ALLOWANCE_MS = 24 * 60 * 60 * 1000;

export async function ledgerBuiltTable(
  db: Db,
  datasetId: string,
  table: string,
  now = Date.now(),
): Promise<void> {
  await db
    .insertInto('dataset_retired_tables')
    .values({ table_name: table, dataset_id: datasetId, retired_at: now + BUILD_ALLOWANCE_MS })
    .execute();
}

/** Takes a table that `ledgerBuiltTable` entered out of the ledger: it is kept (swapped in) or was dropped. */
export async function keepBuiltTable(db: Db, table: string): Promise<void> {
  await db.deleteFrom('dataset_retired_tables').where('table_name', '=', table).execute();
}
