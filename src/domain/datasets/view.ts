// Assembles datasets in the public shape (docs/api.md, "Datasets") from their rows, a few queries per page.
import type { DatasetRow } from '../../storage/db/tables.js';
import { appIdFields, type AppIdFields } from '../identity/app-id.js';
import type { Db, UserSummary } from '../identity/users.js';
import { summariesOf } from '../identity/summaries.js';
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
}

/** Renders dataset rows with their schemas, tags, creators and workspaces, keeping the rows' order. */
export async function viewDatasets(db: Db, rows: DatasetRow[]): Promise<Dataset[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [schemas, tags, summaries] = await Promise.all([
    db.selectFrom('dataset_schemas').selectAll().where('dataset_id', 'in', ids).execute(),
    db
      .selectFrom('dataset_tags as t')
      .innerJoin('apps as a', 'a.id', 't.app_id')
      .select(['t.id', 't.dataset_id', 't.app_id', 'a.name'])
      .where('t.dataset_id', 'in', ids)
      .orderBy('t.created_at')
      .execute(),
    summariesOf(db, rows),
  ]);
  const schemaOf = new Map(schemas.map((s) => [s.dataset_id, s]));
  const tagsOf = new Map<string, DatasetTag[]>();
  for (const t of tags) {
    const list = tagsOf.get(t.dataset_id) ?? [];
    list.push({ datasetTagId: t.id, name: t.name, datasetId: t.dataset_id, ...appIdFields(t.app_id) });
    tagsOf.set(t.dataset_id, list);
  }
  return rows.map((row) => {
    const schema = schemaOf.get(row.id);
    const createdBy = summaries.users.get(row.created_by_user_id);
    const createdByWorkspace = summaries.workspaces.get(row.workspace_id);
    if (schema === undefined || createdBy === undefined || createdByWorkspace === undefined) {
      throw new Error(`dataset ${row.id} is missing its schema, creator or workspace`);
    }
    return {
      datasetId: row.id,
      name: row.name,
      description: row.description,
      dateCreated: row.created_at,
      recordCount: Number(row.record_count),
      dateLastRecordUpdated: row.date_last_record_updated,
      createdBy,
      createdByWorkspace,
      datasetTags: tagsOf.get(row.id) ?? [],
      datasetSchema: {
        datasetSchemaId: schema.id,
        properties: JSON.parse(schema.properties) as SchemaProperty[],
        primaryKey: JSON.parse(schema.primary_key) as string[],
      },
    };
  });
}
