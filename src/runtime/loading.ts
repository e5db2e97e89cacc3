// Wires the loading feature: object store, record store, signing secret, the routes that use them,
// and the cleanup of a deleted dataset's tables and files.
import type { Config } from '../config.js';
import type { RouteGroup } from '../http/app.js';
import type { ApiDeps, TypedApp } from '../http/deps.js';
import type { LoadingDeps } from '../http/loading-deps.js';
import { jobRoutes } from '../http/routes/jobs.js';
import { downloadRoutes } from '../http/routes/downloads.js';
import { loadingRoutes } from '../http/routes/loading.js';
import { recordRoutes } from '../http/routes/records.js';
import { uploadReceiverRoutes } from '../http/routes/uploads.js';
import { storageNotificationRoutes } from '../http/routes/storage-notifications.js';
import type { Database } from '../storage/db/database.js';
import type { DatasetRow } from '../storage/db/tables.js';
import { createObjectStore, objectKeys } from '../storage/objects/index.js';
import { createRecordStore } from '../storage/records/index.js';
import { JobNotifier } from '../worker/notifier.js';
import { resolveSigningSecret } from './signing-secret.js';

/** Builds the loading dependencies of one process. */
export function createLoadingDeps(config: Config, database: Database): LoadingDeps {
  return {
    objects: createObjectStore(config),
    records: createRecordStore(database),
    signingSecret: resolveSigningSecret(config),
    notifier: new JobNotifier(),
  };
}

/** The route groups of loading, jobs and records, for buildApp's options. */
export function loadingRouteGroups(loading: LoadingDeps): {
  accessTokenRoutes: RouteGroup[];
  publicRoutes: RouteGroup[];
} {
  return {
    accessTokenRoutes: [
      (app: TypedApp, deps: ApiDeps) => loadingRoutes(app, deps, loading),
      (app: TypedApp, deps: ApiDeps) => jobRoutes(app, deps),
      (app: TypedApp, deps: ApiDeps) => recordRoutes(app, deps, loading),
    ],
    publicRoutes: [
      (app: TypedApp, deps: ApiDeps) => uploadReceiverRoutes(app, deps, loading),
      (app: TypedApp, deps: ApiDeps) => downloadRoutes(app, deps, loading),
      (app: TypedApp, deps: ApiDeps) => storageNotificationRoutes(app, deps, loading),
    ],
  };
}

/** Drops every records table of a deleted dataset (current, retired, staging) and deletes its files. */
export function datasetCleanup(database: Database, loading: LoadingDeps): (row: DatasetRow) => Promise<void> {
  return async (row) => {
    const tables = new Set(await loading.records.listTables(row.id));
    if (row.records_table !== null) tables.add(row.records_table);
    for (const table of tables) await loading.records.dropTable(table);
    await database.db.deleteFrom('dataset_retired_tables').where('dataset_id', '=', row.id).execute();
    await loading.objects.deletePrefix(objectKeys.dataset(row.id));
  };
}
