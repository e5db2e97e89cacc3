// Attempts counted per key in a fixed window, in the database (console_rate_windows): every API
// instance on the database shares the counts, and a restart resets none. A window opens at the
// first attempt and counts until its end; rows whose window has ended are swept as new ones come,
// so the table stays bounded by recent attempts. Wrong passwords per email+IP and reset links asked
// for by mail per address both count here.
import { problem } from '../../errors.js';
import type { ConsoleDb } from './db.js';

/** At most `limit` attempts per `windowMs`; `refusal` is the 429's detail. */
export interface RateRule {
  limit: number;
  windowMs: number;
  refusal: string;
}

/**
 * Refuses (429, with Retry-After) when `key` has used up its attempts in an open window; otherwise
 * tells whether a window is open (what `countAttempt` needs).
 */
export async function refuseWhenSpent(
  db: ConsoleDb,
  key: string,
  rule: RateRule,
  now: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('console_rate_windows')
    .select(['count', 'window_end_ms'])
    .where('key', '=', key)
    .executeTakeFirst();
  const end = Number(row?.window_end_ms ?? 0);
  const open = row !== undefined && now < end;
  if (open && row.count >= rule.limit) {
    throw problem('rateLimited', rule.refusal, {
      headers: { 'retry-after': String(Math.ceil((end - now) / 1000)) },
    });
  }
  return open;
}

/** Counts one attempt for `key`: in the open window, or in a new one from `now`; sweeps ended rows. */
export async function countAttempt(
  db: ConsoleDb,
  key: string,
  rule: RateRule,
  open: boolean,
  now: number,
): Promise<void> {
  await db
    .insertInto('console_rate_windows')
    .values({ key, count: 1, window_end_ms: now + rule.windowMs })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet(
          open
            ? { count: (eb) => eb('console_rate_windows.count', '+', 1) }
            : { count: 1, window_end_ms: now + rule.windowMs },
        ),
    )
    .execute();
  await db.deleteFrom('console_rate_windows').where('window_end_ms', '<=', now).execute();
}

/** Forgets `key`'s count (a right password ends its window). */
export async function forgetAttempts(db: ConsoleDb, key: string): Promise<void> {
  await db.deleteFrom('console_rate_windows').where('key', '=', key).execute();
}
