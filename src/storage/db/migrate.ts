// Runs the numbered migrations in order, once each, in both dialects (Kysely's Migrator keeps the ledger).
import {
  Migrator,
  sql,
  type MigrationProvider,
  type Kysely,
  type Migration as KyselyMigration,
} from 'kysely';
import type { Database } from './database.js';
import type { Migration } from './migrations/helpers.js';
import { migration as m001 } from './migrations/001_identity.js';
import { migration as m002 } from './migrations/002_datasets.js';
import { migration as m003 } from './migrations/003_proxy_ids.js';
import { migration as m004 } from './migrations/004_loading.js';

/** Every migration, by name; names sort in the order they run. Append only. */
export const MIGRATIONS: Record<string, Migration> = {
  '001_identity': m001,
  '002_datasets': m002,
  '003_proxy_ids': m003,
  '004_loading': m004,
};

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const engine = database.engine.kind;
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(MIGRATIONS).map(([name, m]): [string, KyselyMigration] => [
          name,
          { up: (db: Kysely<unknown>) => m.up(db, engine) },
        ]),
      ),
  };
  // Kysely looks for its ledger tables in every schema; name ours, or a ledger in another schema
  // (a parallel test's, another tenant's) would be taken for this one's.
  const e = database.engine;
  const ledgerSchema = e.kind === 'postgres' ? (e.schema ?? (await currentSchema(database))) : null;
  const schema = ledgerSchema !== null ? { migrationTableSchema: ledgerSchema } : {};
  const migrator = new Migrator({ db: database.db, provider, ...schema });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `migration ${failed} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
      {
        cause: error,
      },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The schema a PostgreSQL connection creates tables in (a DATABASE_URL may set search_path). */
async function currentSchema(database: Database): Promise<string | null> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(
    database.db,
  );
  return rows[0]?.schema ?? null;
}
