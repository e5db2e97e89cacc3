// Assembles datasets in the public shape (docs/api.md, "Datasets") from their rows: one query for the
// rows with their schema, creator and workspace (datasets.ts), one more for their tags.
import type { DatasetRow } from '../../storage/db/tables.js';
import { appIdFields, type AppIdFields } from '../identity/app-id.js';
import type { Db, UserSummary } from '../identity/users.js';
import type { WorkspaceSummary } from '../identity/workspaces.js';
import type { SchemaProperty } from './schema.js';

export interface DatasetTag extends AppIdFields {
  datasetTagId: string;
  name: string;
  datasetId: string;
}

/** The dataset of the public record. */
export interface Dataset {
  datasetId: string;
  name: string;
  description: string;
  dateCreated: string;
  recordCount: number;
  dateLastRecordUpdated: string | null;
  createdBy: UserSummary;
  createdByWorkspace: WorkspaceSummary;
  datasetTags: DatasetTag[];
  datasetSchema: { datasetSchemaId: number; properties: SchemaProperty[]; primaryKey: string[] };
  /** 1 when defined, bumped by each schema change. */
  schemaVersion: number;
}

/** A dataset's row with what its view needs besides its tags: its schema, creator and workspace. */
export interface DatasetViewRow extends DatasetRow {
  schema_id: number;
  schema_properties: string;
  schema_primary_key: string;
  creator_name: string;
  creator_email: string;
  workspace_name: string;
}

/**
 * The columns a DatasetViewRow adds to `datasets as d`, from the joins of `viewJoins`: one query
 * for the rows and their one-to-one parts, one more for every row's tags.
 */
export const VIEW_COLUMNS = [
  's.id as schema_id',
  's.properties as schema_properties',
  's.primary_key as schema_primary_key',
  'u.display_name as creator_name',
  'u.email as creator_email',
  'w.display_name as workspace_name',
] as const;

/** Renders dataset rows (with their view columns) and their tags, keeping the rows' order. */
export async function viewDatasets(db: Db, rows: DatasetViewRow[]): Promise<Dataset[]> {
  if (rows.length === 0) return [];
  const tags = await db
    .selectFrom('dataset_tags as t')
    .innerJoin('apps as a', 'a.id', 't.app_id')
    .select(['t.id', 't.dataset_id', 't.app_id', 'a.name'])
    .where(
      't.dataset_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('t.created_at')
    .execute();
  const tagsOf = new Map<string, DatasetTag[]>();
  for (const t of tags) {
    const list = tagsOf.get(t.dataset_id) ?? [];
    list.push({ datasetTagId: t.id, name: t.name, datasetId: t.dataset_id, ...appIdFields(t.app_id) });
    tagsOf.set(t.dataset_id, list);
  }
  return rows.map((row) => ({
    datasetId: row.id,
    name: row.name,
    description: row.description,
    dateCreated: row.created_at,
    recordCount: Number(row.record_count),
    dateLastRecordUpdated: row.date_last_record_updated,
    createdBy: { userId: row.created_by_user_id, displayName: row.creator_name, email: row.creator_email },
    createdByWorkspace: { workspaceId: row.workspace_id, displayName: row.workspace_name },
    datasetTags: tagsOf.get(row.id) ?? [],
    datasetSchema: {
      datasetSchemaId: row.schema_id,
      properties: JSON.parse(row.schema_properties) as SchemaProperty[],
      primaryKey: JSON.parse(row.schema_primary_key) as string[],
    },
    schemaVersion: Number(row.schema_version),
  }));
}
