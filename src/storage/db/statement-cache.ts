// Kysely prepares every query afresh; on SQLite compiling the statement costs more than running it.
// This keeps the most recently used prepared statements by SQL text (Kysely runs one query at a
// time on its connection, so a cached statement is never in use twice at once).
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';

/** The connection as Kysely sees it, with `prepare` served from a bounded LRU cache. */
export function withStatementCache(conn: BetterSqlite3.Database, capacity = 256): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => conn.close(),
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
