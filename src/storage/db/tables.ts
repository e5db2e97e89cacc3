// Row shapes of the metadata tables, as Kysely sees them. Timestamps are ISO-8601 UTC text with
// microseconds (sortable as text in both dialects); expiry instants are epoch seconds.
import type { Generated, Insertable, Selectable } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  display_name: string;
  email: string;
  created_at: string;
}

export interface AppsTable {
  id: string;
  name: string;
  owner_workspace_id: number | null;
  created_at: string;
}

export interface AppKeysTable {
  kid: string;
  app_id: string;
  alg: string;
  public_key_pem: string;
  created_at: string;
  revoked_at: string | null;
}

export interface WorkspacesTable {
  id: Generated<number>;
  display_name: string;
  owner_user_id: number;
  key_hash: string;
  key_version: number;
  /** `Organization` or `Campaign` (WORKSPACE_TYPES). */
  type: Generated<string>;
  created_at: string;
}

export interface InstallationsTable {
  id: Generated<number>;
  app_id: string;
  workspace_id: number;
  name: string;
  created_by_user_id: number;
  created_at: string;
}

export interface AccessTokensTable {
  token_hash: string;
  installation_id: number;
  key_version: number;
  permissions: string;
  expires_at: number;
  created_at: string;
  /** The app key whose JWT minted the token (null: minted by the operator or before keys were kept). */
  app_key_kid: string | null;
}

export interface DatasetsTable {
  id: string;
  workspace_id: number;
  name: string;
  description: string;
  created_by_user_id: number;
  created_by_app_id: string;
  created_at: string;
  updated_at: string;
  record_count: number;
  date_last_record_updated: string | null;
  /** Name of the table that holds the current records; null until the first load. */
  records_table: string | null;
  /** Bumped by every successful load; paging tokens and exports are tied to it. */
  generation: number;
}

export interface DatasetSchemasTable {
  id: Generated<number>;
  dataset_id: string;
  /** JSON: [{name, type, required}] */
  properties: string;
  /** JSON: [name, ...] */
  primary_key: string;
}

export interface DatasetTagsTable {
  id: string;
  dataset_id: string;
  app_id: string;
  created_at: string;
}

export interface ProxyIdsTable {
  /** Non-secret leading characters of the ID, shown in lists, logs and metrics. */
  prefix: string;
  /** Hex sha256 of the whole ID; the ID itself is never stored. */
  id_hash: string;
  name: string;
  created_at: string;
  revoked_at: string | null;
}

/** A load job; instants (`lease_expires_at`, `upload_expires_at`) are epoch milliseconds. */
export interface DatasetJobsTable {
  id: string;
  dataset_id: string;
  workspace_id: number;
  job_type: string;
  mode: string;
  content_type: string | null;
  /** recordsLoad only; sensitive (presigned query): never logged. */
  source_url: string | null;
  object_key: string | null;
  status: string;
  lease_owner: string | null;
  lease_expires_at: number | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  created_by_user_id: number;
  upload_expires_at: number | null;
  /** uploadUrl only: `singlerequest` or `resumable` (UPLOAD_TYPES). */
  upload_type: string | null;
  /** Resumable uploads: bytes persisted so far (a prefix of the file, in slices). */
  upload_received: number | null;
  /** Resumable uploads: the file's total size, once a slice declared it. */
  upload_total: number | null;
  /** Who is streaming a PUT into this upload now; a second PUT waits for it to end. */
  upload_claim: string | null;
  /** Epoch milliseconds after which an unreleased claim (a PUT that died) lapses. */
  upload_claim_expires_at: number | null;
}

/** One status entry of a job; the newest is its current status. */
export interface DatasetJobLogsTable {
  id: Generated<number>;
  job_id: string;
  status_code: number;
  status_name: string;
  /** JSON: {message, rowsRead, rowsLoaded, duplicatesCollapsed} */
  log_data: string | null;
  /** JSON: {errorCount, errors: [{line, property?, message}]} */
  error_data: string | null;
  created_at: string;
}

/** A superseded records table, dropped a little after its replacement (readers may still page it). */
export interface DatasetRetiredTablesTable {
  table_name: string;
  dataset_id: string;
  /** Epoch milliseconds. */
  retired_at: number;
}

/** Every table of the metadata database. */
export interface Tables {
  users: UsersTable;
  apps: AppsTable;
  app_keys: AppKeysTable;
  workspaces: WorkspacesTable;
  installations: InstallationsTable;
  access_tokens: AccessTokensTable;
  datasets: DatasetsTable;
  dataset_schemas: DatasetSchemasTable;
  dataset_tags: DatasetTagsTable;
  proxy_ids: ProxyIdsTable;
  dataset_jobs: DatasetJobsTable;
  dataset_job_logs: DatasetJobLogsTable;
  dataset_retired_tables: DatasetRetiredTablesTable;
}

export type UserRow = Selectable<UsersTable>;
export type AppRow = Selectable<AppsTable>;
export type AppKeyRow = Selectable<AppKeysTable>;
export type WorkspaceRow = Selectable<WorkspacesTable>;
export type InstallationRow = Selectable<InstallationsTable>;
export type DatasetRow = Selectable<DatasetsTable>;
export type DatasetSchemaRow = Selectable<DatasetSchemasTable>;
export type DatasetTagRow = Selectable<DatasetTagsTable>;
export type NewDataset = Insertable<DatasetsTable>;
export type ProxyIdRow = Selectable<ProxyIdsTable>;
export type DatasetJobRow = Selectable<DatasetJobsTable>;
export type DatasetJobLogRow = Selectable<DatasetJobLogsTable>;
