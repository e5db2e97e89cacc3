// The console's two windowed counters (wrong passwords per email+IP, reset links asked for by mail
// per address) become one table: each row carries the end of its own window, so counters of
// different windows share it and one sweep. The open windows are carried over.
import { sql } from 'kysely';
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

/** The windows of the two counters as they were (SIGN_IN_WINDOW_MS, RESET_REQUEST_WINDOW_MS). */
const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
const RESET_REQUEST_WINDOW_MS = 60 * 60 * 1000;

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('console_rate_windows')
      // A hash of what is counted (the address, with the IP for sign-ins): nothing in clear.
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('count', 'integer', notNull)
      /** Epoch milliseconds: the window's end; the row counts nothing from then on. */
      .addColumn('window_end_ms', 'bigint', notNull)
      .execute();
    await sql`insert into console_rate_windows (key, count, window_end_ms)
      select key, failures, window_start_ms + ${SIGN_IN_WINDOW_MS} from console_sign_in_failures`.execute(db);
    await sql`insert into console_rate_windows (key, count, window_end_ms)
      select key, requests, window_start_ms + ${RESET_REQUEST_WINDOW_MS} from console_reset_requests`.execute(
      db,
    );
    await db.schema.dropTable('console_sign_in_failures').execute();
    await db.schema.dropTable('console_reset_requests').execute();
  },
};
