// The identity epoch: a counter the database itself bumps whenever a row that decides what a
// credential stands for is updated or deleted (access tokens, installations, workspaces, apps,
// users, app keys), cascades included. A process may reuse what it resolved a credential to under
// one epoch for as long as the epoch stays the same: a revocation, a key rotation or an uninstall
// bumps it in the same transaction, so it takes effect at once in every process. Triggers, not
// the code that writes: no write path can forget it. Inserts leave it alone (nothing resolved
// before can depend on a row that did not exist).
import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/** The tables whose updates and deletes bump the identity epoch. */
export const IDENTITY_TABLES = ['access_tokens', 'installations', 'workspaces', 'apps', 'users', 'app_keys'];

export const migration: Migration = {
  async up(db, engine) {
    await db.schema
      .createTable('change_epochs')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('epoch', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into change_epochs (name, epoch) values ('identity', 1)`.execute(db);
    const bump = sql.raw(`update change_epochs set epoch = epoch + 1 where name = 'identity'`);
    if (engine === 'postgres') {
      // Once per statement that changed a row (a delete of a thousand tokens bumps it once, one of
      // none not at all). The function keeps the schema it was made in, whatever the caller's path.
      await sql`create function bump_identity_epoch() returns trigger language plpgsql
        set search_path from current as $$
        begin
          if exists (select 1 from changed) then ${bump}; end if;
          return null;
        end $$`.execute(db);
      for (const table of IDENTITY_TABLES) {
        // PostgreSQL takes a transition table on a trigger of one event only: one trigger each.
        for (const event of ['update', 'delete']) {
          await sql`create trigger ${sql.id(`${table}_identity_epoch_${event}`)}
            after ${sql.raw(event)} on ${sql.table(table)} referencing old table as changed
            for each statement execute function bump_identity_epoch()`.execute(db);
        }
      }
      return;
    }
    for (const table of IDENTITY_TABLES) {
      for (const event of ['update', 'delete']) {
        await sql`create trigger ${sql.id(`${table}_identity_epoch_${event}`)}
          after ${sql.raw(event)} on ${sql.table(table)}
          begin ${bump}; end`.execute(db);
      }
    }
  },
};
