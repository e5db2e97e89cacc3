// Opens the metadata database: SQLite (embedded default) or PostgreSQL (scale-out), behind one
// Kysely handle. Engine differences are exposed as capabilities, never as instanceof checks.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { withStatementCache } from './statement-cache.js';
import type pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import { SqliteFileDialect } from './sqlite-dialect.js';
import type { Tables } from './tables.js';

/** The SQLite engine: a file, opened by better-sqlite3. */
export interface SqliteEngine {
  readonly kind: 'sqlite';
  readonly file: string;
  /** The connection Kysely uses; bulk loaders open their own with openSqliteConnection. */
  readonly connection: BetterSqlite3.Database;
}

/** The PostgreSQL engine: a pool; `schema` is set when the handle is confined to one schema. */
export interface PostgresEngine {
  readonly kind: 'postgres';
  readonly pool: pg.Pool;
  readonly schema: string | null;
}

export type Engine = SqliteEngine | PostgresEngine;

/** What the engine can do that callers choose by (never by asking which engine it is). */
export interface DatabaseCapabilities {
  /** `SELECT ... FOR UPDATE SKIP LOCKED`: concurrent claimers pass over each other's rows. SQLite
   * serialises writers instead, so a plain `UPDATE` is already atomic there. */
  readonly skipLocked: boolean;
}

/** The database handle passed down from the composition root. */
export interface Database {
  readonly db: Kysely<Tables>;
  readonly engine: Engine;
  readonly capabilities: DatabaseCapabilities;
  /**
   * Runs one statement (parameters as `$1` on PostgreSQL, `?` on SQLite: compile it with `db`).
   * With `prepareAs`, PostgreSQL keeps it parsed and planned per connection under that name, so
   * every name must always go with the same text; SQLite's statement cache keeps it anyway.
   */
  run(text: string, parameters: readonly unknown[], prepareAs?: string): Promise<void>;
  /** Throws when the database cannot answer; /readyz uses it. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: the schema to create and use (tests isolate themselves this way). */
  schema?: string;
  /** PostgreSQL: the most connections the pool opens (DATABASE_POOL_SIZE); default 10. */
  maxConnections?: number;
}

/** Opens `sqlite:<file>` or `postgres://…`. */
export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  return openPostgres(url, options);
}

/**
 * What an SQLite connection is for, which sizes its page cache. `service`: the service's own
 * connections (metadata, pages of records, the change log, the proxy's rate buckets), which read
 * the same pages again and again: better-sqlite3's 16 MB. `pass`: a connection that goes through
 * a table once (a load's writer, an export, a key's build): SQLite's own default, 2 MB. There a
 * larger cache holds memory for no gain: a table of a million records outgrows either, and a
 * unique index sorts in runs of the cache's size, faster in small ones (docs/benchmarks.md).
 */
export type ConnectionUse = 'service' | 'pass';

const PAGE_CACHE_KIB: Record<ConnectionUse, number> = { service: 16_000, pass: 2_000 };

/** Opens a better-sqlite3 connection with the pragmas every connection of the service uses. */
export function openSqliteConnection(file: string, use: ConnectionUse): BetterSqlite3.Database {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    keepPrivate(file);
  }
  const conn = new BetterSqlite3(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  conn.pragma('busy_timeout = 10000');
  conn.pragma(`cache_size = -${PAGE_CACHE_KIB[use]}`);
  conn.defaultSafeIntegers(false);
  return conn;
}

/**
 * The file holds every dataset's records: readable by the service's user only, whatever the umask
 * or the folder's mode. SQLite gives the WAL and shared-memory files the database file's mode, so a
 * private database file keeps them private too; a file made before (0644 under the usual umask) is
 * made private when its owner opens it.
 */
function keepPrivate(file: string): void {
  if (!existsSync(file)) {
    closeSync(openSync(file, 'a', 0o600));
    return;
  }
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (!existsSync(path)) continue;
    const { mode, uid } = statSync(path);
    if ((mode & 0o077) !== 0 && uid === process.getuid?.()) chmodSync(path, mode & 0o700);
  }
}

function openSqlite(file: string): Database {
  const connection = openSqliteConnection(file, 'service');
  // The driver waits for another connection's write lock without holding the event loop (whenUnlocked).
  connection.pragma('busy_timeout = 0');
  const db = new Kysely<Tables>({
    dialect: new SqliteFileDialect(withStatementCache(connection)),
  });
  return {
    db,
    engine: { kind: 'sqlite', file, connection },
    capabilities: { skipLocked: false },
    run: async (text, parameters) => {
      await db.executeQuery(CompiledQuery.raw(text, [...parameters]));
    },
    ping: async () => {
      connection.prepare('select 1').get();
    },
    close: () => db.destroy(),
  };
}

const INT8_OID = 20;

async function openPostgres(url: string, options: OpenOptions): Promise<Database> {
  // Loaded on demand: SQLite installs never pay for the PostgreSQL driver at start-up.
  const { default: pg } = await import('pg');
  const schema = options.schema ?? null;
  if (schema !== null) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${schema}"`);
    } finally {
      await admin.end();
    }
  }
  const size = options.maxConnections ?? 10;
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    // Connections once opened stay open (idle ones are not closed after 10 s, pg-pool's default):
    // a burst after a quiet moment would otherwise open them again under load, each new backend
    // starting with cold catalog caches (docs/benchmarks.md, "What the API's changes bought").
    min: size,
    // Idle connections do not keep the process alive: a command ends once its work has, as when
    // idle ones were closed.
    allowExitOnIdle: true,
    ...(schema !== null ? { options: `-c search_path="${schema}"` } : {}),
    types: {
      // Counts and ids fit in a double; record values that may not are read as text by the record store.
      getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
        oid === INT8_OID
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client's error (database restart) must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  // pg-pool listens for errors only while a client is idle: a connection lost while checked out
  // (mid-query) would be an unhandled 'error' event and end the process. Its query fails instead,
  // and the pool drops the dead client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    engine: { kind: 'postgres', pool, schema },
    capabilities: { skipLocked: true },
    run: async (text, parameters, prepareAs) => {
      await pool.query(
        prepareAs === undefined
          ? { text, values: [...parameters] }
          : { name: prepareAs, text, values: [...parameters] },
      );
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
