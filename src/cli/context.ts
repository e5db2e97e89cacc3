// Shared plumbing of the CLI commands: configuration, a migrated database, output.
import { existsSync } from 'node:fs';
import { loadConfig, type Config } from '../config.js';
import { openDatabase, type Database } from '../storage/db/database.js';
import { migrateToLatest, schemaStatus, statusOf, type SchemaStatus } from '../storage/db/migrate.js';
import { databaseUnreachable } from './errors.js';

/** Options every command accepts. */
export interface OutputOptions {
  json?: boolean;
}

/** Runs `fn` with the configuration and a migrated database, closing it afterwards. */
export async function withDatabase<T>(fn: (database: Database, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { database } = await openMigrated(config);
  try {
    return await fn(database, config);
  } finally {
    await database.close();
  }
}

/**
 * Opens and migrates the configured database. A new SQLite file is said aloud: run from another
 * folder, the default `./data` would otherwise be a silent, empty second database.
 */
export async function openMigrated(config: Config): Promise<{ database: Database; applied: string[] }> {
  const sqliteFile = sqliteFileOf(config);
  const isNew = sqliteFile !== null && !existsSync(sqliteFile);
  let database: Database | null = null;
  let applied: string[];
  try {
    database = await openDatabase(config.databaseUrl, { maxConnections: config.databasePoolSize });
    applied = await migrateToLatest(database);
  } catch (err) {
    await database?.close();
    throw databaseUnreachable(err, config.databaseUrl) ?? err;
  }
  if (isNew) {
    process.stderr.write(
      `dx: created a new database at ${sqliteFile} (set DATA_DIR or DATABASE_URL to use another)\n`,
    );
  }
  return { database, applied };
}

/**
 * How the configured database's schema stands, changing nothing: a SQLite file that does not exist
 * is not created (every migration is pending there).
 */
export async function readSchemaStatus(config: Config): Promise<SchemaStatus> {
  const sqliteFile = sqliteFileOf(config);
  if (sqliteFile !== null && !existsSync(sqliteFile)) return statusOf([]);
  let database: Database | null = null;
  try {
    database = await openDatabase(config.databaseUrl);
    return await schemaStatus(database);
  } catch (err) {
    throw databaseUnreachable(err, config.databaseUrl) ?? err;
  } finally {
    await database?.close();
  }
}

function sqliteFileOf(config: Config): string | null {
  return config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : null;
}

/** Prints either JSON (for scripts) or the human-readable lines. */
export function output(options: OutputOptions, json: unknown, human: () => string[]): void {
  if (options.json === true) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else process.stdout.write(`${human().join('\n')}\n`);
}

/** Parses a positive integer argument or throws a usage error naming it. */
export function parseId(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`${what} must be a positive integer (got "${value}")`);
  return n;
}

/** Formats rows as an aligned text table. */
export function table(headers: string[], rows: (string | number | null)[][]): string[] {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}
