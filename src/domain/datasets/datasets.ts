// Defining, listing, renaming and deleting datasets. A token sees the datasets of its workspace
// tagged with its app; anything else is "not found" (never "forbidden": no existence leak).
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatasetRow, Tables } from '../../storage/db/tables.js';
import { objectKeys, type ObjectStore } from '../../storage/objects/index.js';
import { changesTableName, type RecordStore } from '../../storage/records/index.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import { appIdOf, type AppIdRef } from '../identity/app-id.js';
import { readNamePage, type NamePageQuery, type NamePosition } from '../lists/by-name.js';
import type { Db } from '../identity/users.js';
import { parseDatasetSchema, type DatasetSchema, type DatasetSchemaInput } from './schema.js';
import { VIEW_COLUMNS, viewDatasets, type Dataset } from './view.js';
import { connectedApps, tagDataset } from './tags.js';

/** The caller of a dataset operation: an installation of an app in a workspace. */
export interface DatasetCaller {
  appId: string;
  workspaceId: number;
  ownerUserId: number;
}

/**
 * Who reads a dataset: an installation (a DatasetCaller) sees the datasets of its workspace tagged
 * with its app; a member of the workspace in the console (appId null) sees every dataset of it.
 */
export interface DatasetReader {
  workspaceId: number;
  appId: string | null;
}

/** The console's reader: a member of the workspace, who sees all its datasets whatever their tags. */
export const workspaceReader = (workspaceId: number): DatasetReader => ({ workspaceId, appId: null });

export interface NewDatasetInput {
  name: string;
  description?: string;
  schema: DatasetSchemaInput;
  /** The apps, besides the creating one, that may see the dataset; absent means every connected app. */
  tagIds?: AppIdRef[];
}

/** Defines a dataset in the caller's workspace, tagged for the apps that may see it. */
export async function createDataset(db: Db, caller: DatasetCaller, input: NewDatasetInput): Promise<Dataset> {
  const schema = parseDatasetSchema(input.schema);
  const connected = await connectedApps(db, caller.workspaceId);
  let tagApps: string[];
  if (input.tagIds === undefined) {
    tagApps = connected.map((a) => a.platformAppId);
  } else {
    const listed = input.tagIds.map((t, i) => appIdOf(t, `tagIds[${i}]`));
    const known = new Set(connected.map((a) => a.platformAppId));
    const bad = listed.filter((id) => !known.has(id));
    if (bad.length > 0) {
      throw problem('invalid', 'Datasets can only be tagged with apps connected to the workspace.', {
        errors: { tagIds: bad.map((id) => `app ${id} is not connected to this workspace`) },
      });
    }
    tagApps = [caller.appId, ...listed];
  }
  const id = randomUUID();
  const now = nowTimestamp();
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('datasets')
      .values({
        id,
        workspace_id: caller.workspaceId,
        name: input.name,
        description: input.description ?? '',
        created_by_user_id: caller.ownerUserId,
        created_by_app_id: caller.appId,
        created_at: now,
        updated_at: now,
        record_count: 0,
        date_last_record_updated: null,
        records_table: null,
        generation: 0,
      })
      .execute();
    await trx
      .insertInto('dataset_schemas')
      .values({
        dataset_id: id,
        properties: JSON.stringify(schema.properties),
        primary_key: JSON.stringify(schema.primaryKey),
      })
      .execute();
    for (const appId of new Set(tagApps)) await tagDataset(trx, id, appId);
  });
  return getDataset(db, caller, id);
}

/** Lists the datasets the caller may see, oldest first. */
export async function listDatasets(db: Db, caller: DatasetReader): Promise<Dataset[]> {
  const rows = await visibleViews(db, caller).orderBy('d.created_at').orderBy('d.id').execute();
  return viewDatasets(db, rows);
}

/**
 * A page of the datasets the caller may see, in name order (then ID), found by name (by-name.ts),
 * and where the next page starts (null on the last).
 */
export async function listDatasetsByName(
  db: Db,
  caller: DatasetReader,
  query: NamePageQuery,
): Promise<{ datasets: Dataset[]; next: NamePosition | null }> {
  const page = await readNamePage(visibleViews(db, caller), { name: 'd.name', id: 'd.id' }, query, (r) => ({
    name: r.name,
    id: r.id,
  }));
  return { datasets: await viewDatasets(db, page.rows), next: page.next };
}

/** One dataset the caller may see, in the public shape. */
export async function getDataset(db: Db, caller: DatasetReader, datasetId: string): Promise<Dataset> {
  const row = await visibleViews(db, caller).where('d.id', '=', datasetId).executeTakeFirst();
  const [view] = row !== undefined ? await viewDatasets(db, [row]) : [];
  if (view === undefined)
    throw problem('notFound', `Dataset ${datasetId} not found.`, { code: 'dataset_not_found' });
  return view;
}

/** The row of a dataset the caller may see, or a 404 problem. */
export async function findVisibleDataset(
  db: Db,
  caller: DatasetReader,
  datasetId: string,
): Promise<DatasetRow> {
  const row = await visible(db, caller).where('d.id', '=', datasetId).executeTakeFirst();
  if (row === undefined)
    throw problem('notFound', `Dataset ${datasetId} not found.`, { code: 'dataset_not_found' });
  return row;
}

/** A dataset the caller may see with its schema, read in one query; a 404 problem otherwise. */
export async function findVisibleDatasetWithSchema(
  db: Db,
  caller: DatasetReader,
  datasetId: string,
): Promise<{ row: DatasetRow; schema: DatasetSchema }> {
  const found = await withSchema(visible(db, caller), datasetId);
  if (found === undefined)
    throw problem('notFound', `Dataset ${datasetId} not found.`, { code: 'dataset_not_found' });
  return found;
}

/** A dataset's row with its schema, read in one query (they change together); undefined if none. */
export function datasetWithSchema(
  db: Db,
  datasetId: string,
): Promise<{ row: DatasetRow; schema: DatasetSchema } | undefined> {
  return withSchema(db.selectFrom('datasets as d').selectAll('d'), datasetId);
}

async function withSchema(
  rows: ReturnType<typeof visible>,
  datasetId: string,
): Promise<{ row: DatasetRow; schema: DatasetSchema } | undefined> {
  const found = await rows
    .innerJoin('dataset_schemas as s', 's.dataset_id', 'd.id')
    .select(['s.properties as schema_properties', 's.primary_key as schema_primary_key'])
    .where('d.id', '=', datasetId)
    .executeTakeFirst();
  if (found === undefined) return undefined;
  const { schema_properties: properties, schema_primary_key: primaryKey, ...row } = found;
  return {
    row,
    schema: {
      properties: JSON.parse(properties) as DatasetSchema['properties'],
      primaryKey: JSON.parse(primaryKey) as string[],
    },
  };
}

/** The schema of a dataset (its properties and primary key). */
export async function datasetSchemaOf(db: Db, datasetId: string): Promise<DatasetSchema> {
  const row = await db
    .selectFrom('dataset_schemas')
    .selectAll()
    .where('dataset_id', '=', datasetId)
    .executeTakeFirstOrThrow();
  return {
    properties: JSON.parse(row.properties) as DatasetSchema['properties'],
    primaryKey: JSON.parse(row.primary_key) as string[],
  };
}

/** Renames or re-describes a dataset. */
export async function updateDataset(
  db: Db,
  caller: DatasetCaller,
  datasetId: string,
  patch: { name?: string; description?: string },
): Promise<Dataset> {
  await findVisibleDataset(db, caller, datasetId);
  const set: { name?: string; description?: string; updated_at: string } = { updated_at: nowTimestamp() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description;
  await db.updateTable('datasets').set(set).where('id', '=', datasetId).execute();
  return getDataset(db, caller, datasetId);
}

/** Where a dataset's data lives besides its row: record tables and files. */
export interface DatasetStorage {
  records: RecordStore;
  objects: ObjectStore;
}

/**
 * Deletes a dataset the caller sees, then everything it held: every records table (current,
 * retired, staging of a running job) and every file (uploads, exports). `alongside` runs in the
 * transaction that deletes the row (the console writes its audit row there).
 */
export async function deleteDataset(
  db: Kysely<Tables>,
  storage: DatasetStorage,
  caller: DatasetReader,
  datasetId: string,
  alongside?: (trx: Transaction<Tables>, row: DatasetRow) => Promise<void>,
): Promise<void> {
  const row = await findVisibleDataset(db, caller, datasetId);
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('datasets').where('id', '=', datasetId).execute();
    await alongside?.(trx, row);
  });
  const tables = new Set(await storage.records.listTables(row.id));
  if (row.records_table !== null) tables.add(row.records_table);
  for (const table of tables) await storage.records.dropTable(table);
  await storage.records.dropTable(changesTableName(row.id));
  await db.deleteFrom('dataset_retired_tables').where('dataset_id', '=', row.id).execute();
  await storage.objects.deletePrefix(objectKeys.dataset(row.id));
}

/** The rows of the datasets `caller` sees. */
function visible(db: Db, caller: DatasetReader) {
  return db.selectFrom('datasets as d').selectAll('d').where(visibleTo(caller));
}

/** The datasets `caller` sees, each with what its view needs but its tags (view.ts). */
function visibleViews(db: Db, caller: DatasetReader) {
  return db
    .selectFrom('datasets as d')
    .innerJoin('dataset_schemas as s', 's.dataset_id', 'd.id')
    .innerJoin('users as u', 'u.id', 'd.created_by_user_id')
    .innerJoin('workspaces as w', 'w.id', 'd.workspace_id')
    .selectAll('d')
    .select(VIEW_COLUMNS)
    .where(visibleTo(caller));
}

/**
 * Whether the dataset `d` is one `caller` sees: of its workspace and, for an app, tagged with it.
 * Raw SQL: the same condition in every query that reads datasets for a caller, cheap to build.
 */
export function visibleTo(caller: DatasetReader) {
  const inWorkspace = sql<boolean>`d.workspace_id = ${caller.workspaceId}`;
  if (caller.appId === null) return inWorkspace;
  return sql<boolean>`${inWorkspace} and exists (select 1 from dataset_tags t where t.dataset_id = d.id and t.app_id = ${caller.appId})`;
}
