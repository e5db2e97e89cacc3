// Runs the numbered migrations in order, once each, in both dialects. A small runner of our own
// rather than Kysely's Migrator: that one introspects every table of the database to find its
// ledger, which is slow with many record tables and fails when a worker drops a replaced record
// table at the same moment (PostgreSQL resolves each table by name mid-scan).
import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import type { Migration } from './migrations/helpers.js';
import { migration as m001 } from './migrations/001_identity.js';
import { migration as m002 } from './migrations/002_datasets.js';
import { migration as m003 } from './migrations/003_proxy_ids.js';
import { migration as m004 } from './migrations/004_loading.js';
import { migration as m005 } from './migrations/005_dxapi_clients.js';
import { migration as m006 } from './migrations/006_token_keys.js';
import { migration as m007 } from './migrations/007_load_options.js';
import { migration as m008 } from './migrations/008_idempotency_keys.js';
import { migration as m009 } from './migrations/009_export_links.js';
import { migration as m010 } from './migrations/010_job_progress.js';
import { migration as m011 } from './migrations/011_webhooks.js';
import { migration as m012 } from './migrations/012_job_source_url.js';
import { migration as m013 } from './migrations/013_console_people.js';
import { migration as m014 } from './migrations/014_identity_epoch.js';
import { migration as m015 } from './migrations/015_data_epoch.js';
import { migration as m016 } from './migrations/016_job_request_id.js';
import { migration as m017 } from './migrations/017_proxy_rate_buckets.js';
import { migration as m018 } from './migrations/018_console_recovery.js';
import { migration as m019 } from './migrations/019_workspace_jobs.js';
import { migration as m020 } from './migrations/020_console_account_disabled.js';
import { migration as m021 } from './migrations/021_app_key_uses.js';
import { migration as m022 } from './migrations/022_schema_versions.js';
import { migration as m023 } from './migrations/023_proxy_id_uses.js';
import { migration as m024 } from './migrations/024_console_rate_windows.js';
import { migration as m025 } from './migrations/025_change_batches.js';
import { migration as m026 } from './migrations/026_dataset_webhooks.js';

/** Every migration, by name; names sort in the order they run. Append only. */
export const MIGRATIONS: Record<string, Migration> = {
  '001_identity': m001,
  '002_datasets': m002,
  '003_proxy_ids': m003,
  '004_loading': m004,
  '005_dxapi_clients': m005,
  '006_token_keys': m006,
  '007_load_options': m007,
  '008_idempotency_keys': m008,
  '009_export_links': m009,
  '010_job_progress': m010,
  '011_webhooks': m011,
  '012_job_source_url': m012,
  '013_console_people': m013,
  '014_identity_epoch': m014,
  '015_data_epoch': m015,
  '016_job_request_id': m016,
  '017_proxy_rate_buckets': m017,
  '018_console_recovery': m018,
  '019_workspace_jobs': m019,
  '020_console_account_disabled': m020,
  '021_app_key_uses': m021,
  '022_schema_versions': m022,
  '023_proxy_id_uses': m023,
  '024_console_rate_windows': m024,
  '025_change_batches': m025,
  '026_dataset_webhooks': m026,
};

/** The ledger of applied migrations, one row per name. */
export const LEDGER_TABLE = 'dx_schema_migrations';

/** How the database's schema stands against this code's migrations. */
export interface SchemaStatus {
  /** Migrations this code has that the database lacks, in the order they would run. */
  pending: string[];
  /** Migrations the database has that this code does not know (a newer version applied them). */
  unknown: string[];
}

/** The schema status of `applied` (the ledger's names) against this code's migrations. */
export function statusOf(applied: readonly string[]): SchemaStatus {
  const done = new Set(applied);
  return {
    pending: Object.keys(MIGRATIONS)
      .sort()
      .filter((name) => !done.has(name)),
    unknown: applied.filter((name) => !(name in MIGRATIONS)).sort(),
  };
}

/**
 * Reads the ledger and compares it with this code's migrations, writing nothing (not even the
 * ledger table: a database never migrated has every migration pending).
 */
export async function schemaStatus(database: Database): Promise<SchemaStatus> {
  const db = database.db as unknown as Kysely<unknown>;
  const ledgerExists =
    database.engine.kind === 'postgres'
      ? // to_regclass resolves the name through search_path, as the unqualified queries do.
        (await sql<{ found: string | null }>`select to_regclass(${LEDGER_TABLE})::text as found`.execute(db))
          .rows[0]?.found != null
      : (await sql`select 1 from sqlite_master where type = 'table' and name = ${LEDGER_TABLE}`.execute(db))
          .rows.length > 0;
  if (!ledgerExists) return statusOf([]);
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(LEDGER_TABLE)}`.execute(db);
  return statusOf(rows.map((r) => r.name));
}

/**
 * Applies every pending migration in one transaction and returns the names applied. Concurrent
 * starters (several roles, several machines) wait on a lock, then find nothing left to do.
 */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const engine = database.engine.kind;
  return database.db.connection().execute(async (conn) => {
    const db = conn as unknown as Kysely<unknown>;
    // SQLite: take the write lock up front, so two starters cannot both read an empty ledger.
    await sql.raw(engine === 'sqlite' ? 'begin immediate' : 'begin').execute(db);
    try {
      if (engine === 'postgres') {
        // One lock per schema: tenants (and parallel tests) in other schemas do not wait.
        await sql`select pg_advisory_xact_lock(hashtext('dx_schema_migrations:' || current_schema()))`.execute(
          db,
        );
      }
      await db.schema
        .createTable(LEDGER_TABLE)
        .ifNotExists()
        .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('applied_at', 'varchar(64)', (c) => c.notNull())
        .execute();
      const done = await sql<{ name: string }>`select name from ${sql.table(LEDGER_TABLE)}`.execute(db);
      const applied = new Set(done.rows.map((r) => r.name));
      const pending = Object.keys(MIGRATIONS)
        .sort()
        .filter((name) => !applied.has(name));
      for (const name of pending) {
        try {
          await MIGRATIONS[name]!.up(db, engine);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new Error(`migration ${name} failed: ${reason}`, { cause: error });
        }
        await sql`insert into ${sql.table(LEDGER_TABLE)} (name, applied_at) values (${name}, ${new Date().toISOString()})`.execute(
          db,
        );
      }
      await sql`commit`.execute(db);
      return pending;
    } catch (error) {
      await sql`rollback`.execute(db).catch(() => undefined);
      throw error;
    }
  });
}
