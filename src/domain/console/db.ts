// The query builder the console's domain code works with: the service's tables plus its own.
import type { Kysely, Transaction } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import type { ConsoleTables } from '../../storage/db/console-tables.js';

export type ConsoleDb = Kysely<Tables & ConsoleTables> | Transaction<Tables & ConsoleTables>;

/** Widens the service's handle to see the console's tables (no new connection). */
export function consoleDb(db: Kysely<Tables>): Kysely<Tables & ConsoleTables> {
  return db.withTables<ConsoleTables>();
}

/**
 * The same handle (or transaction) seen as the service's own, for the identity domain's functions.
 * Safe: `withTables` only widens the type, so the object and its connection are the same; Kysely's
 * types are invariant in the table set, hence the cast.
 */
export function asServiceDb(db: ConsoleDb): Kysely<Tables> | Transaction<Tables> {
  return db as unknown as Kysely<Tables> | Transaction<Tables>;
}
