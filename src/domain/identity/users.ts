// User summaries (`createdBy`) and the owners of workspaces.
import type { Kysely, Transaction } from 'kysely';
import type { Tables, UserRow } from '../../storage/db/tables.js';
import { nowTimestamp } from '../../lib/time.js';

export type Db = Kysely<Tables> | Transaction<Tables>;

/** The user summary of the public record. */
export interface UserSummary {
  userId: number;
  displayName: string;
  email: string;
}

/** Creates a user; the email may be empty. */
export async function createUser(db: Db, displayName: string, email: string): Promise<UserRow> {
  return db
    .insertInto('users')
    .values({ display_name: displayName, email, created_at: nowTimestamp() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Maps a user row to its public summary. */
export function userSummary(row: Pick<UserRow, 'id' | 'display_name' | 'email'>): UserSummary {
  return { userId: row.id, displayName: row.display_name, email: row.email };
}

/** The user with this id (the owner of a workspace always exists). */
export async function getUser(db: Db, userId: number): Promise<UserRow> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
}
