// The databases every interface suite runs over: a fresh SQLite file, and a fresh PostgreSQL schema
// when PostgreSQL answers (REQUIRE_POSTGRES=1 turns its absence into a failure, as CI wants).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/storage/db/database.js';
import { migrateToLatest } from '../../src/storage/db/migrate.js';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type DatabaseName = 'sqlite' | 'postgres';

/** One database a suite runs against; `create` makes a fresh, migrated, isolated one. */
export interface DatabaseTarget {
  name: DatabaseName;
  /** Why the target is skipped, or null when it runs. */
  skip: string | null;
  create(): Promise<IsolatedDatabase>;
}

export interface IsolatedDatabase {
  database: Database;
  /** The DATABASE_URL of this process; PostgreSQL also needs `schema` as an open option. */
  url: string;
  /** The DATABASE_URL a separate process (the CLI, a worker) uses to reach the same data. */
  processUrl: string;
  /** PostgreSQL schema, null on SQLite. */
  schema: string | null;
  dataDir: string;
  dispose(): Promise<void>;
}

let postgresReachable: Promise<string | null> | null = null;
/** null when PostgreSQL answers, else the reason it does not. */
function probePostgres(): Promise<string | null> {
  postgresReachable ??= (async () => {
    // Generous: on a busy machine a reachable server can take seconds to accept a connection.
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 10_000 });
    try {
      await client.connect();
      await client.query('select 1');
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return postgresReachable;
}

/** Both targets; call at the top level of a test file (it awaits the PostgreSQL probe). */
export async function databaseTargets(): Promise<DatabaseTarget[]> {
  const pgProblem = await probePostgres();
  if (pgProblem !== null && process.env.REQUIRE_POSTGRES === '1') {
    throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL at ${POSTGRES_URL} is unreachable: ${pgProblem}`);
  }
  if (pgProblem !== null) {
    process.stderr.write(
      `PostgreSQL unreachable at ${POSTGRES_URL} (${pgProblem}): PostgreSQL tests skipped.\n`,
    );
  }
  return [
    { name: 'sqlite', skip: null, create: createSqlite },
    {
      name: 'postgres',
      skip: pgProblem === null ? null : `PostgreSQL unreachable: ${pgProblem}`,
      create: createPostgres,
    },
  ];
}

/**
 * Declares the suite once per target, named `<name> (<target>)` and skipped with the reason where
 * the target is unavailable. Await it at the top level of a test file.
 */
export async function forEachDatabase(name: string, suite: (target: DatabaseTarget) => void): Promise<void> {
  declareSuites(await databaseTargets(), name, suite);
}

/** As forEachDatabase, on one engine: for what only it has, or where one engine is enough. */
export async function onDatabase(
  engine: DatabaseName,
  name: string,
  suite: (target: DatabaseTarget) => void,
): Promise<void> {
  declareSuites(
    (await databaseTargets()).filter((t) => t.name === engine),
    name,
    suite,
  );
}

function declareSuites(targets: DatabaseTarget[], name: string, suite: (target: DatabaseTarget) => void) {
  for (const target of targets) {
    void describe(`${name} (${target.name})`, { skip: target.skip ?? false }, () => suite(target));
  }
}

/** The URL by which another process joins `schema`: the schema rides in its search_path. */
export function postgresUrlIn(schema: string): string {
  return `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** Drops a schema the tests made, with everything in it. */
export async function dropPostgresSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await admin.end();
  }
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'dx-test-'));
}

async function createSqlite(): Promise<IsolatedDatabase> {
  const dataDir = tempDir();
  const url = `sqlite:${join(dataDir, 'dx.sqlite')}`;
  const database = await openDatabase(url);
  await migrateToLatest(database);
  return {
    database,
    url,
    processUrl: url,
    schema: null,
    dataDir,
    dispose: async () => {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function createPostgres(): Promise<IsolatedDatabase> {
  const dataDir = tempDir();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase(POSTGRES_URL, { schema, maxConnections: 4 });
  await migrateToLatest(database);
  return {
    database,
    url: POSTGRES_URL,
    processUrl: postgresUrlIn(schema),
    schema,
    dataDir,
    dispose: async () => {
      await database.close();
      await dropPostgresSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
