// Wake-ups between processes: a process that queues a job says so, and every worker process of the
// same database looks for jobs at once instead of at its next WORKER_POLL_MS. On PostgreSQL through
// LISTEN/NOTIFY on a channel of the schema; on SQLite, whose processes share one host, through a
// file beside the database whose times the publisher touches and the workers watch (inotify on
// Linux). Only a hint: workers poll all the same, so a wake-up lost (a listener reconnecting, a
// pooler in transaction mode that cannot hold a LISTEN, a file system that reports no changes)
// costs a poll's wait, never a job.
import { closeSync, openSync, watch, type FSWatcher } from 'node:fs';
import { utimes } from 'node:fs/promises';
import pg from 'pg';
import { sql } from 'kysely';
import type { Database, PostgresEngine } from './database.js';

/** The channel of the connection's schema: many services may share one database, one each. */
const CHANNEL_SQL = `'dx_jobs_' || left(md5(current_schema()), 16)`;

/** How long a lost listener waits before it connects again. */
const RECONNECT_MS = 1000;

/** The file whose changes carry wake-ups on SQLite, named like SQLite's own -wal and -shm; null for
 * a database in memory, which no other process shares. */
function wakeupFile(file: string): string | null {
  return file === ':memory:' ? null : `${file}-wakeup`;
}

/** Makes the wake-up file if it is missing: empty, and private like the database beside it. */
function ensureWakeupFile(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
}

/** Tells every process listening on `database` (its schema on PostgreSQL) that a job may be waiting. */
export async function publishJobWakeup(database: Database): Promise<void> {
  const { engine } = database;
  switch (engine.kind) {
    case 'postgres':
      await sql`select pg_notify(${sql.raw(CHANNEL_SQL)}, '')`.execute(database.db);
      return;
    case 'sqlite': {
      const path = wakeupFile(engine.file);
      if (path === null) return;
      const now = new Date();
      await utimes(path, now, now).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        ensureWakeupFile(path);
        return utimes(path, now, now);
      });
      return;
    }
  }
}

/** A listener; close() ends its connection. */
export interface JobWakeupListener {
  close(): Promise<void>;
}

/**
 * Calls `onWakeup` for each wake-up published on `database`, and once when it starts listening (for
 * jobs queued before); while the channel is lost it tries again every second, telling `onError`
 * once per outage. Null for an SQLite database in memory.
 */
export function listenForJobWakeups(
  database: Database,
  onWakeup: () => void,
  onError: (err: unknown) => void,
): JobWakeupListener | null {
  const { engine } = database;
  switch (engine.kind) {
    case 'postgres':
      return listenOnChannel(engine, onWakeup, onError);
    case 'sqlite': {
      const path = wakeupFile(engine.file);
      return path === null ? null : watchWakeupFile(path, onWakeup, onError);
    }
  }
}

/** Watches the wake-up file; a watch that ends (the file removed or replaced) is set up again. */
function watchWakeupFile(
  path: string,
  onWakeup: () => void,
  onError: (err: unknown) => void,
): JobWakeupListener {
  let closed = false;
  let watcher: FSWatcher | null = null;
  let retry: NodeJS.Timeout | null = null;
  let inOutage = false;

  const lost = (err: unknown) => {
    watcher?.close();
    watcher = null;
    if (closed || retry !== null) return;
    if (!inOutage) {
      inOutage = true;
      onError(err);
    }
    retry = setTimeout(() => {
      retry = null;
      start();
    }, RECONNECT_MS);
  };
  const start = () => {
    if (closed) return;
    try {
      ensureWakeupFile(path);
      // Not persistent: the watch alone must not keep a stopping process alive.
      const w = watch(path, { persistent: false }, (event) => {
        // 'rename': the file was removed or replaced, and this watch sees it no more.
        if (event === 'rename') lost(new Error(`the job wake-up file ${path} was removed or replaced`));
        else onWakeup();
      });
      w.on('error', lost);
      watcher = w;
      inOutage = false;
      onWakeup();
    } catch (err) {
      lost(err);
    }
  };
  start();
  return {
    close: async () => {
      closed = true;
      if (retry !== null) clearTimeout(retry);
      watcher?.close();
    },
  };
}

/** Listens on the schema's channel on a connection of its own (LISTEN holds a session). */
function listenOnChannel(
  engine: PostgresEngine,
  onWakeup: () => void,
  onError: (err: unknown) => void,
): JobWakeupListener {
  const options = engine.pool.options;
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let inOutage = false;

  const connect = async (): Promise<void> => {
    const c = new pg.Client(options);
    client = c;
    let failed = false;
    const lost = (err: unknown) => {
      if (failed) return;
      failed = true;
      c.removeAllListeners('notification');
      void c.end().catch(() => undefined);
      if (closed) return;
      if (!inOutage) {
        inOutage = true;
        onError(err);
      }
      retry = setTimeout(() => void connect(), RECONNECT_MS);
    };
    c.on('error', lost);
    c.on('end', () => lost(new Error('the wake-up listener lost its connection')));
    c.on('notification', () => onWakeup());
    try {
      await c.connect();
      const { rows } = await c.query<{ channel: string }>(`select ${CHANNEL_SQL} as channel`);
      const channel = rows[0]?.channel ?? '';
      await c.query(`listen "${channel}"`);
      inOutage = false;
      // Jobs queued while it was not listening are found by this look.
      onWakeup();
    } catch (err) {
      lost(err);
    }
  };
  void connect();

  return {
    close: async () => {
      closed = true;
      if (retry !== null) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
