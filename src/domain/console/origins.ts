// Which app made a dataset or asked for a load, for the console's "who did what". The API's views
// name the workspace's owner there (`createdBy`, as DXAPI does), while the rows record the app:
// the one whose token created the dataset, the installation whose token created the job.
import type { Kysely, Transaction } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import type { ConsoleDb } from './db.js';

type Db = Kysely<Tables> | Transaction<Tables>;

/** The name of the app that created the dataset; null when the row names none that exists. */
export async function datasetMadeBy(db: Db, datasetId: string): Promise<string | null> {
  const row = await db
    .selectFrom('datasets as d')
    .innerJoin('apps as a', 'a.id', 'd.created_by_app_id')
    .select('a.name')
    .where('d.id', '=', datasetId)
    .executeTakeFirst();
  return row?.name ?? null;
}

/** The name of the app whose installation asked for the load; null for a load made before loads
 * recorded their installation, or whose installation is gone. */
export async function loadAskedBy(db: Db, jobId: string): Promise<string | null> {
  const row = await db
    .selectFrom('dataset_jobs as j')
    .innerJoin('installations as i', 'i.id', 'j.installation_id')
    .innerJoin('apps as a', 'a.id', 'i.app_id')
    .select('a.name')
    .where('j.id', '=', jobId)
    .executeTakeFirst();
  return row?.name ?? null;
}

/** Who loaded a file into the dataset from the console for this load (the audit row the upload
 * wrote, whose detail ends `load JOBID`); null for a load an app asked for. */
export async function loadUploadedBy(
  db: ConsoleDb,
  workspaceId: number,
  jobId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('console_audit')
    .select('actor')
    .where('workspace_id', '=', workspaceId)
    .where('action', '=', 'dataset.file_loaded')
    // A job id is a UUID (hex and dashes): nothing in it is a LIKE wildcard.
    .where('detail', 'like', `%, load ${jobId}`)
    .executeTakeFirst();
  return row?.actor ?? null;
}
