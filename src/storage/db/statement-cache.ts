// Kysely prepares every query afresh; on SQLite compiling the statement costs more than running it.
// This keeps the most recently used prepared statements by SQL text (Kysely runs one query at a
// time on its connection, so a cached statement is never in use twice at once).
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';

/** The connection as the SQLite driver sees it: Kysely's interface, and whether a transaction is open. */
export type DriverConnection = SqliteDatabase & { readonly inTransaction: boolean };

/** The connection as Kysely sees it, with `prepare` served from a bounded LRU cache. */
export function withStatementCache(conn: BetterSqlite3.Database, capacity = 256): DriverConnection {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => conn.close(),
    get inTransaction() {
      return conn.inTransaction;
    },
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (statement !== undefined) {
        cache.delete(sql); // re-inserted below: Map order is the LRU order
      } else {
        statement = conn.prepare(sql);
        if (cache.size >= capacity) {
          const oldest = cache.keys().next();
          if (oldest.done !== true) cache.delete(oldest.value);
        }
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}
