// The end of an SQLite staging table's load: the rows a later row of the same key replaces are
// deleted and the primary key's unique index is built, in one transaction on the connection given
// (sqlite.ts says why the key comes last). A large table's key is built on a thread of its own
// (sqlite-key-thread.ts): the build is one synchronous statement of seconds for millions of rows,
// and on the job's thread it would hold the event loop of a process that also serves the API.
import { runOnSqliteThread } from './sqlite-thread.js';
import type BetterSqlite3 from 'better-sqlite3';
import { quoteId, ROW_COLUMN, type TableSchema } from './record-store.js';

/** A staging table whose rows are all written, and what its key must do. */
export interface KeyWork {
  table: string;
  schema: TableSchema;
  /** What the written rows hold (StagingOptions.writes). */
  writes: 'records' | 'keysToDelete';
  /** Rows copied in at the start and the last row number among them; written rows follow it. */
  copied: { rows: number; lastRow: number };
  written: number;
}

/** Rows removed on the way: copied rows replaced or deleted by written ones, written rows collapsed. */
export interface KeyOutcome {
  replaced: number;
  collapsed: number;
  deleted: number;
}

/** Rows from which the key is built on a thread: below, the build takes less than a thread's start (~30 ms). */
export const KEY_THREAD_ROWS = 100_000;

/** Does the key's work on `conn`: a delete by key, or the key of written records, or nothing without one. */
export function finishKey(conn: BetterSqlite3.Database, work: KeyWork): KeyOutcome {
  if (work.writes === 'keysToDelete') return deleteByKey(conn, work);
  if (work.schema.primaryKey.length === 0) return { replaced: 0, collapsed: 0, deleted: 0 };
  return { ...buildKey(conn, work), deleted: 0 };
}

/** Runs finishKey on a thread of its own with a connection of its own to `file`. */
export function finishKeyOnThread(file: string, work: KeyWork): Promise<KeyOutcome> {
  return runOnSqliteThread(new URL('./sqlite-key-thread.js', import.meta.url), file, work, 'key');
}

/**
 * Builds the primary key's unique index in one transaction, after removing the rows a later row
 * of the same key replaces: copied rows whose key a written row has, then, only if the index
 * meets duplicates, every written row but the last of its key. Returns how many of each went.
 */
function buildKey(conn: BetterSqlite3.Database, work: KeyWork): { replaced: number; collapsed: number } {
  const table = quoteId(work.table);
  const row = quoteId(ROW_COLUMN);
  const key = keyColumns(work);
  const written = `${row} > ${work.copied.lastRow}`;
  const createIndex = createIndexOf(conn, work);
  return conn.transaction(() => {
    const replaced = deleteCopiedRowsOfWrittenKeys(conn, work);
    let collapsed = 0;
    try {
      conn.transaction(() => createIndex.run())();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
      // Duplicates among the written rows: the last row of each key wins.
      collapsed = conn
        .prepare(
          `delete from ${table} where ${written} and ${row} not in (select max(${row}) from ${table} where ${written} group by ${key})`,
        )
        .run().changes;
      createIndex.run();
    }
    return { replaced, collapsed };
  })();
}

/**
 * A delete by key, in one transaction: counts the distinct written keys, deletes the copied rows
 * they name, then the written keys themselves, and builds the key's index on what remains (copied
 * rows only, unique already). Set-based statements inside SQLite: no key passes through here.
 */
function deleteByKey(conn: BetterSqlite3.Database, work: KeyWork): KeyOutcome {
  const table = quoteId(work.table);
  const key = keyColumns(work);
  const written = `${quoteId(ROW_COLUMN)} > ${work.copied.lastRow}`;
  const createIndex = createIndexOf(conn, work);
  return conn.transaction(() => {
    const { keys } = conn
      .prepare(`select count(*) as keys from (select 1 from ${table} where ${written} group by ${key})`)
      .get() as { keys: number };
    const deleted = deleteCopiedRowsOfWrittenKeys(conn, work);
    conn.prepare(`delete from ${table} where ${written}`).run();
    createIndex.run();
    return { replaced: 0, collapsed: work.written - keys, deleted };
  })();
}

/** Deletes the copied rows whose key a written row has; returns how many went. */
function deleteCopiedRowsOfWrittenKeys(conn: BetterSqlite3.Database, work: KeyWork): number {
  if (work.copied.rows === 0 || work.written === 0) return 0;
  const table = quoteId(work.table);
  const row = quoteId(ROW_COLUMN);
  const key = keyColumns(work);
  // The written keys are hashed into a transient index once, then each copied row probes it.
  return conn
    .prepare(
      `delete from ${table} where ${row} <= ${work.copied.lastRow} and (${key}) in (select ${key} from ${table} where ${row} > ${work.copied.lastRow})`,
    )
    .run().changes;
}

const keyColumns = (work: KeyWork) => work.schema.primaryKey.map(quoteId).join(', ');

function createIndexOf(conn: BetterSqlite3.Database, work: KeyWork): BetterSqlite3.Statement {
  return conn.prepare(
    `create unique index ${quoteId(`${work.table}_pk`)} on ${quoteId(work.table)} (${keyColumns(work)})`,
  );
}
