// The shared buckets in the service's database: PostgreSQL for processes on several hosts, the
// SQLite file for the processes of one host. One statement per report settles every key in it:
// an upsert that refills, charges and returns the level atomically, whichever process runs it.
import type { Statement } from 'better-sqlite3';
import type { Database, PostgresEngine } from '../storage/db/database.js';
import { openSqliteConnection } from '../storage/db/database.js';
import type { RateStore } from './shared-rate.js';

/** A store of shared buckets that holds a connection of its own or shares the database's. */
export interface ClosableRateStore extends RateStore {
  close(): void;
}

/** Keys per statement: a bound on its parameters (SQLite allows 32,766). */
const KEYS_PER_STATEMENT = 500;

/** The refill-then-charge of one row; `least`/`greatest` are `min`/`max` in SQLite. */
const settleSql = (least: string, greatest: string, burst: string, perMs: string) =>
  `on conflict (proxy_id) do update set
     tokens = ${least}(${burst}, proxy_rate_buckets.tokens + ${greatest}(0, excluded.refilled_at - proxy_rate_buckets.refilled_at) * ${perMs})
       - (${burst} - excluded.tokens),
     refilled_at = ${greatest}(proxy_rate_buckets.refilled_at, excluded.refilled_at)
   returning proxy_id, tokens`;

/** The buckets in `database`'s `proxy_rate_buckets` table. */
export function openRateStore(database: Database): ClosableRateStore {
  return database.engine.kind === 'postgres'
    ? postgresRateStore(database.engine.pool)
    : sqliteRateStore(database.engine.file);
}

// A new row is the full bucket less the count, so `burst - excluded.tokens` is the count in both
// the insert and the update; keys go in sorted, so two processes lock rows in the same order.
function rows(counts: ReadonlyMap<string, number>, burst: number, wallMs: number) {
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, n]) => [key, burst - n, wallMs] as const);
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += KEYS_PER_STATEMENT) out.push(items.slice(i, i + KEYS_PER_STATEMENT));
  return out;
}

function postgresRateStore(pool: PostgresEngine['pool']): ClosableRateStore {
  const text = `insert into proxy_rate_buckets (proxy_id, tokens, refilled_at)
    select * from unnest($3::text[], $4::float8[], $5::float8[])
    ${settleSql('least', 'greatest', '$1::float8', '$2::float8')}`;
  return {
    async settle(counts, rate, burst, wallMs) {
      const levels = new Map<string, number>();
      for (const part of chunks(rows(counts, burst, wallMs))) {
        const { rows: settled } = await pool.query<{ proxy_id: string; tokens: number }>(text, [
          burst,
          rate / 1000,
          part.map((r) => r[0]),
          part.map((r) => r[1]),
          part.map((r) => r[2]),
        ]);
        for (const row of settled) levels.set(row.proxy_id, row.tokens);
      }
      return levels;
    },
    close: () => undefined,
  };
}

function sqliteRateStore(file: string): ClosableRateStore {
  const conn = openSqliteConnection(file, 'service');
  // better-sqlite3 waits synchronously: a locked file must fail the report at once, not stall the
  // proxy's event loop (a few failures in a row make the limit per-process until it is free).
  conn.pragma('busy_timeout = 0');
  const statements = new Map<number, Statement<unknown[]>>();
  const statement = (keys: number) => {
    let s = statements.get(keys);
    if (s === undefined) {
      const values = Array.from({ length: keys }, () => '(?, ?, ?)').join(', ');
      s = conn.prepare(
        `insert into proxy_rate_buckets (proxy_id, tokens, refilled_at) values ${values}
         ${settleSql('min', 'max', '@burst', '@perMs')}`,
      );
      statements.set(keys, s);
    }
    return s;
  };
  return {
    settle(counts, rate, burst, wallMs) {
      try {
        const levels = new Map<string, number>();
        for (const part of chunks(rows(counts, burst, wallMs))) {
          const params: unknown[] = [...part.flat(), { burst, perMs: rate / 1000 }];
          const settled = statement(part.length).all(...params) as { proxy_id: string; tokens: number }[];
          for (const row of settled) levels.set(row.proxy_id, row.tokens);
        }
        return Promise.resolve(levels);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
    close: () => conn.close(),
  };
}
