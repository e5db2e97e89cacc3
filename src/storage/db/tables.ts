// Row shapes of the metadata tables, as Kysely sees them. Timestamps (`*_at` text columns) are
// ISO-8601 UTC text with microseconds, sortable as text in both dialects. Instants kept as numbers
// (bigint columns) name their unit where they are declared: access tokens count epoch seconds (as
// JWT claims do), job and ledger instants epoch milliseconds.
import type { Generated, Insertable, Selectable } from 'kysely';

// The closed sets a job's text columns hold. They are declared here, beside the columns, because
// storage imports nothing from the domain; domain/jobs/status.ts re-exports them, and everything
// above storage takes them from there.

/** A job's states (their public codes are JOB_STATUS_CODES in domain/jobs/status.ts). */
export const JOB_STATUSES = ['Created', 'Queued', 'Running', 'Completed', 'Failed', 'Expired'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Where a job's file comes from: an upload URL, or a URL the service fetches. */
export const JOB_TYPES = ['uploadUrl', 'recordsLoad'] as const;
export type JobType = (typeof JOB_TYPES)[number];

/** What a load does with the dataset (the policy of each is domain/jobs/load-modes.ts). */
export const LOAD_MODES = ['create', 'replace', 'append', 'upsert', 'delete'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

/** The formats a file is read as. */
export const CONTENT_TYPES = ['csv', 'json', 'tsv'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

/** How an upload URL takes its file: one PUT, or a resumable session of slices (GCS semantics). */
export const UPLOAD_TYPES = ['singlerequest', 'resumable'] as const;
export type UploadType = (typeof UPLOAD_TYPES)[number];

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

/** When an app key last signed a JWT the service verified (first use of each JWT per process). */
export interface AppKeyUsesTable {
  kid: string;
  last_used_at: string;
}

/** When a proxy ID was last used by a request the proxy admitted (written at most once a minute per
 * ID and proxy process; proxy/proxy-id-uses.ts). */
export interface ProxyIdUsesTable {
  prefix: string;
  last_used_at: string;
}

/** A proxy ID's rate-limit bucket, shared by the proxy processes (proxy/shared-rate-store.ts). */
export interface ProxyRateBucketsTable {
  proxy_id: string;
  /** Negative while the processes owe what they admitted together beyond it. */
  tokens: number;
  /** Wall-clock milliseconds of the last refill. */
  refilled_at: number;
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
  /** Epoch seconds. */
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
  /** Bumped by every successful load and schema change; paging tokens and exports are tied to it. */
  generation: number;
  /** The schema's version: 1 when defined, bumped by every schema change (schema-change.ts). */
  schema_version: Generated<number>;
  /** The last generation whose change history was pruned (or came before the feed): older cursors answer 410. */
  changes_pruned_through: Generated<number>;
}

export interface DatasetSchemasTable {
  id: Generated<number>;
  dataset_id: string;
  /** JSON: [{name, type, required}] */
  properties: string;
  /** JSON: [name, ...] */
  primary_key: string;
  /** What the change to this version did, in words; null for the first version. */
  last_change: string | null;
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

/** A load job; its instants (`*_expires_at`) are epoch milliseconds. */
export interface DatasetJobsTable {
  id: string;
  dataset_id: string;
  workspace_id: number;
  job_type: JobType;
  mode: LoadMode;
  /** uploadUrl: the format its file is (or will be) read as; null for recordsLoad (found on fetch). */
  content_type: ContentType | null;
  /** recordsLoad only: the URL to fetch, sealed (AES-256-GCM, domain/jobs/source-url.ts) and
   * cleared once the job ends; a credential (presigned query, user:password@): never logged. */
  source_url: string | null;
  /** recordsLoad only: the URL without secrets (origin, path, query keys), kept for logs. */
  source_shown: string | null;
  object_key: string | null;
  status: JobStatus;
  /** The worker running the job: set exactly while it is Running. */
  lease_owner: string | null;
  /** Epoch milliseconds after which the lease lapses and another worker may take the job. */
  lease_expires_at: number | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  created_by_user_id: number;
  /** uploadUrl only: epoch milliseconds after which an upload still awaiting its file expires. */
  upload_expires_at: number | null;
  /** uploadUrl only (null for recordsLoad). */
  upload_type: UploadType | null;
  /** Resumable uploads: bytes persisted so far (a prefix of the file, in slices). */
  upload_received: number | null;
  /** Resumable uploads: the file's total size, once a slice declared it. */
  upload_total: number | null;
  /** Who is streaming a PUT into this upload now; a second PUT waits for it to end. */
  upload_claim: string | null;
  /** Epoch milliseconds after which an unreleased claim (a PUT that died) lapses. */
  upload_claim_expires_at: number | null;
  /** 1: run the whole load, then drop the table instead of committing it; 0: a real load. */
  dry_run: Generated<number>;
  /** Records with defects the load may leave out and still complete. */
  max_bad_records: Generated<number>;
  /** Bytes of the file read so far by the worker running the job (before gunzip); null until it starts. */
  progress_bytes: number | null;
  /** The file's size when known (the stored upload, or the fetched Content-Length), else null. */
  progress_total_bytes: number | null;
  /** Records read so far (the parser's rowsRead). */
  progress_rows: number | null;
  /** When the figures were last written (a timestamp like created_at); null: never. */
  progress_at: string | null;
  /** The installation whose access token created the job (null: created before #13); its app gets
   * the job's webhook events. */
  installation_id: number | null;
  /** The id of the API request that created the job (its X-Request-Id; null: created before #34). */
  request_id: string | null;
}

/** One defect of a job's file, stored as the parse goes (all of them, not only the first 100). */
export interface DatasetJobErrorsTable {
  job_id: string;
  /** The attempt that found it (DatasetJobsTable.attempts); only the last attempt's are read. */
  attempt: number;
  /** The line where the record starts (1 for defects of the header or the file as a whole). */
  line: number;
  /** 1, 2, 3 … in the order found; orders the defects of one line. */
  seq: number;
  property: string | null;
  message: string;
  /** The record as the parser saw it, cut at 4096 characters; '' when not known, null on the
   * second and later defects of one record (its text is on the first). */
  original_text: string | null;
}

/** One status entry of a job; the newest is its current status. */
export interface DatasetJobLogsTable {
  id: Generated<number>;
  job_id: string;
  status_code: number;
  status_name: JobStatus;
  /** JSON: {message, rowsRead, rowsLoaded, duplicatesCollapsed, rowsRejected} */
  log_data: string | null;
  /** JSON: {errorCount, errors: [{line, property?, message}]} */
  error_data: string | null;
  created_at: string;
}

/** A superseded records table, dropped a little after its replacement (readers may still page it). */
/** What a change batch holds: records' keys, a schema change (with the keys it rewrote), or a
 * dataset's first load, whose changes are every record it loaded: its keys are not written to the
 * log but read from the records table (those no later batch changed). */
export const CHANGE_BATCH_KINDS = ['records', 'schemaChanged', 'firstLoad'] as const;
export type ChangeBatchKind = (typeof CHANGE_BATCH_KINDS)[number];

/** A batch of a dataset's change log: visible once `seq` (the generation its commit made) is set. */
export interface DatasetChangeBatchesTable {
  id: Generated<number>;
  dataset_id: string;
  seq: number | null;
  kind: ChangeBatchKind;
  /** JSON of a schema change (schemaVersion, schema, changes); null for records. */
  detail: string | null;
  /** Epoch milliseconds. */
  created_at: number;
  committed_at: number | null;
}

export interface DatasetRetiredTablesTable {
  table_name: string;
  dataset_id: string;
  /** Epoch milliseconds. */
  retired_at: number;
}

/** The text formats of records:retrieve. */
export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A download link of records:retrieve; it pins its records table until it expires. */
export interface DatasetExportLinksTable {
  id: Generated<number>;
  dataset_id: string;
  /** The dataset's generation at the call. */
  generation: number;
  /** That generation's records table; null when the dataset had never been loaded. */
  table_name: string | null;
  format: ExportFormat;
  /** Epoch milliseconds. */
  expires_at: number;
  /** JSON: the schema's properties at the call (the pinned table's columns); null on links made
   * before schema changes existed, whose dataset's schema is theirs. */
  properties: string | null;
}

/**
 * The first answer to a request sent with an `Idempotency-Key`, per installation (#12). A row
 * whose `response_status` is null is in progress: `holder` (one random id per claim) is handling
 * it until `lease_expires_at`. Instants are epoch milliseconds.
 */
export interface IdempotencyKeysTable {
  installation_id: number;
  key: string;
  /** Hex SHA-256 of the request: method, route, parameters, query and body. */
  fingerprint: string;
  holder: string;
  created_at: number;
  /** While in progress: when an unfinished claim (its process died) lapses; null once answered. */
  lease_expires_at: number | null;
  response_status: number | null;
  response_type: string | null;
  response_body: string | null;
}

/** The events an app's webhook receives (#13). */
export const WEBHOOK_EVENTS = [
  'dataset.job.completed',
  'dataset.job.failed',
  'dataset.job.expired',
  'dataset.changed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Where a delivery stands: still to be sent (or retried), received with a 2xx, or given up. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** An app's one webhook endpoint. */
export interface AppWebhooksTable {
  app_id: string;
  url: string;
  /** The signing secret sealed with a key derived from SIGNING_SECRET (lib/secrets.ts, bound to its app). */
  secret_sealed: string;
  /** JSON: the WebhookEvent names it receives. */
  events: string;
  created_at: string;
  updated_at: string;
}

/** One event to deliver to an app (the outbox); its instants (`*_at` numbers) are epoch milliseconds. */
export interface WebhookDeliveriesTable {
  /** The delivery id (a UUID): X-DX-Delivery and the body's deliveryId. */
  id: string;
  app_id: string;
  installation_id: number;
  workspace_id: number;
  /** The job whose end the delivery tells of; null for dataset.changed. */
  job_id: string | null;
  /** dataset.changed: the dataset, and the generation its commit made (the body's cursor). */
  dataset_id: string | null;
  generation: number | null;
  event: WebhookEvent;
  /** When the job made its final move (a timestamp like created_at). */
  occurred_at: string;
  created_at: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  /** Retries stop after this instant (24 hours after the event, or after a redelivery request). */
  give_up_at: number;
  /** The worker sending it now, until lease_expires_at. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  /** Why the last attempt failed (timeout, refused address, HTTP status); null after a success. */
  last_error: string | null;
  delivered_at: string | null;
}

/** Counters the database bumps by trigger (migration 014): `identity`, on any update or delete of
 * what a credential resolves to. */
export interface ChangeEpochsTable {
  name: string;
  epoch: number;
}

/** Every table of the metadata database. */
export interface Tables {
  users: UsersTable;
  apps: AppsTable;
  app_keys: AppKeysTable;
  workspaces: WorkspacesTable;
  installations: InstallationsTable;
  access_tokens: AccessTokensTable;
  app_key_uses: AppKeyUsesTable;
  datasets: DatasetsTable;
  dataset_schemas: DatasetSchemasTable;
  dataset_tags: DatasetTagsTable;
  proxy_ids: ProxyIdsTable;
  proxy_id_uses: ProxyIdUsesTable;
  proxy_rate_buckets: ProxyRateBucketsTable;
  dataset_jobs: DatasetJobsTable;
  dataset_job_logs: DatasetJobLogsTable;
  dataset_job_errors: DatasetJobErrorsTable;
  dataset_retired_tables: DatasetRetiredTablesTable;
  dataset_change_batches: DatasetChangeBatchesTable;
  dataset_export_links: DatasetExportLinksTable;
  idempotency_keys: IdempotencyKeysTable;
  app_webhooks: AppWebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  change_epochs: ChangeEpochsTable;
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
export type DatasetJobErrorRow = Selectable<DatasetJobErrorsTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type AppWebhookRow = Selectable<AppWebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
