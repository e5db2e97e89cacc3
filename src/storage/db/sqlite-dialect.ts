// Kysely's SQLite dialect with a driver of our own. SQLite has one connection, so queries take turns
// on it; Kysely's own driver guards it with a mutex whose release wakes every waiter, each of which
// then queues again. Under load (64 concurrent requests, six queries each) that is a herd of
// wake-ups per query and no order among them: some requests lost every race and waited 25 times
// the median. Here the connection passes to the waiters one at a time, in the order they asked.
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DriverConnection } from './statement-cache.js';

/** The dialect of the service's SQLite file, on a connection that better-sqlite3 opened. */
export class SqliteFileDialect implements Dialect {
  constructor(private readonly database: DriverConnection) {}

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createDriver(): Driver {
    return new TurnTakingSqliteDriver(this.database);
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
}

/** Lends the one connection to one query or transaction at a time, first come, first served. */
class TurnTakingSqliteDriver implements Driver {
  private readonly connection: SqliteConnection;
  private inUse = false;
  /** Those waiting for the connection, oldest first. */
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly database: DriverConnection) {
    this.connection = new SqliteConnection(database);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.inUse) {
      this.inUse = true;
      return Promise.resolve(this.connection);
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(this.connection)));
  }

  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.inUse = false;
  }

  /**
   * `begin immediate` takes SQLite's write lock when the transaction begins. A deferred transaction
   * that reads and then writes cannot wait for another process's writer: SQLite answers SQLITE_BUSY
   * at once, whatever busy_timeout says, when the snapshot it read is no longer the newest. Taking
   * the lock first lets busy_timeout do its work, so the CLI (or a second process) writing beside a
   * running service waits its turn instead of failing with "database is locked".
   */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoteName(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to ${quoteName(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release ${quoteName(name)}`));
  }

  async destroy(): Promise<void> {
    this.database.close();
  }
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The longest a statement waits for another connection's write lock (as busy_timeout would). */
export const LOCK_WAIT_MS = 10_000;
/** The longest pause between two tries. */
const MAX_LOCK_PAUSE_MS = 20;

/**
 * Runs compiled queries on better-sqlite3 (synchronous underneath), as Kysely's own does. The
 * connection's busy_timeout is 0: a statement that meets another connection's write lock (a load's
 * key being built on its own thread, another process's transaction) is tried again after a pause
 * in which the event loop runs, instead of SQLite's busy handler sleeping with the loop held. Only a
 * statement outside a transaction, or the `begin` that starts one, is tried again: inside one, the
 * lock is held already.
 */
class SqliteConnection implements DatabaseConnection {
  constructor(private readonly database: DriverConnection) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const run = () => this.run<R>(compiled);
    return this.database.inTransaction ? Promise.resolve(run()) : whenUnlocked(run);
  }

  private run<R>(compiled: CompiledQuery): QueryResult<R> {
    const statement = this.database.prepare(compiled.sql);
    const parameters = compiled.parameters as unknown[];
    if (statement.reader) return { rows: statement.all(parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) {
      throw new Error('the SQLite driver streams select queries only');
    }
    const statement = this.database.prepare(compiled.sql);
    for (const row of statement.iterate(compiled.parameters)) yield { rows: [row as R] };
  }
}

/** Runs `attempt` until SQLite stops answering that another connection holds the lock, or LOCK_WAIT_MS passes. */
export async function whenUnlocked<T>(attempt: () => T): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_LOCK_PAUSE_MS)) {
    try {
      return attempt();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
    }
    await sleep(pause);
  }
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock, or moved on from our snapshot. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
