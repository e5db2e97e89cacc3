// The data epoch: a second counter of change_epochs (migration 014), bumped by the database itself
// on every insert, update or delete of the rows that GET answers of datasets, jobs and records are
// made of (datasets, their schemas and tags, jobs and their status entries; a load's records
// become visible only through the update of its dataset's row). A process may reuse an answer it
// made under one pair of epochs while both stay the same (src/http/read-cache.ts).
//
// On PostgreSQL the bump runs when the transaction commits (a deferred constraint trigger), once
// per transaction: the epoch's row is locked from then to the end of the commit only, so writers of
// these tables do not queue behind one another's long transactions.
import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/** The tables whose changes bump the data epoch. */
export const DATA_TABLES = [
  'datasets',
  'dataset_schemas',
  'dataset_tags',
  'dataset_jobs',
  'dataset_job_logs',
];

export const migration: Migration = {
  async up(db, engine) {
    await sql`insert into change_epochs (name, epoch) values ('data', 1)`.execute(db);
    if (engine === 'postgres') {
      // The transaction that bumped it last: later rows of the same transaction leave it alone.
      await sql`alter table change_epochs add column bumped_in bigint`.execute(db);
      await sql`create function bump_data_epoch() returns trigger language plpgsql
        set search_path from current as $$
        begin
          update change_epochs set epoch = epoch + 1, bumped_in = txid_current()
            where name = 'data' and bumped_in is distinct from txid_current();
          return null;
        end $$`.execute(db);
      for (const table of DATA_TABLES) {
        await sql`create constraint trigger ${sql.id(`${table}_data_epoch`)}
          after insert or update or delete on ${sql.table(table)}
          deferrable initially deferred
          for each row execute function bump_data_epoch()`.execute(db);
      }
      return;
    }
    // SQLite has one writer at a time: a bump per row changed costs a page already being written.
    const bump = sql.raw(`update change_epochs set epoch = epoch + 1 where name = 'data'`);
    for (const table of DATA_TABLES) {
      for (const event of ['insert', 'update', 'delete']) {
        await sql`create trigger ${sql.id(`${table}_data_epoch_${event}`)}
          after ${sql.raw(event)} on ${sql.table(table)}
          begin ${bump}; end`.execute(db);
      }
    }
  },
};
