// Wake-ups between processes on PostgreSQL (LISTEN/NOTIFY): a process that queues a job says so on
// a channel of its schema, and every worker process listening on it looks for jobs at once instead
// of at its next WORKER_POLL_MS. Only a hint: workers poll all the same, so a notification lost (a
// listener reconnecting, a pooler in transaction mode that cannot hold a LISTEN) costs a poll's
// wait, never a job. SQLite has no such channel: its workers in other processes poll.
import pg from 'pg';
import { sql } from 'kysely';
import type { Database } from './database.js';

/** The channel of the connection's schema: many services may share one database, one each. */
const CHANNEL_SQL = `'dx_jobs_' || left(md5(current_schema()), 16)`;

/** How long a lost listener waits before it connects again. */
const RECONNECT_MS = 1000;

/** Tells every process listening on `database`'s schema that a job may be waiting. */
export async function publishJobWakeup(database: Database): Promise<void> {
  if (database.engine.kind !== 'postgres') return;
  await sql`select pg_notify(${sql.raw(CHANNEL_SQL)}, '')`.execute(database.db);
}

/** A listener; close() ends its connection. */
export interface JobWakeupListener {
  close(): Promise<void>;
}

/**
 * Listens on `database`'s channel on a connection of its own (LISTEN holds a session), calling
 * `onWakeup` for each notification; reconnects every second while the connection is lost, telling
 * `onError` once per outage. Null on SQLite.
 */
export function listenForJobWakeups(
  database: Database,
  onWakeup: () => void,
  onError: (err: unknown) => void,
): JobWakeupListener | null {
  if (database.engine.kind !== 'postgres') return null;
  const options = database.engine.pool.options;
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
