// The `dataset.changed` webhook (docs/loading.md, "Following changes"): a delivery is of a job's
// end (job_id) or of a dataset's commit (dataset_id and the generation it made, from which the
// body's cursor is made), so job_id may be null. SQLite cannot drop a NOT NULL: the table is
// rebuilt with its rows and indexes (nothing references it).
import { sql } from 'kysely';
import type { Migration } from './helpers.js';

const COLUMNS = `id, app_id, installation_id, workspace_id, job_id, event, occurred_at, created_at,
  status, attempts, next_attempt_at, give_up_at, lease_owner, lease_expires_at, last_attempt_at,
  last_status_code, last_error, delivered_at`;

export const migration: Migration = {
  async up(db, engine) {
    switch (engine) {
      case 'postgres':
        await sql`alter table webhook_deliveries alter column job_id drop not null`.execute(db);
        break;
      case 'sqlite':
        await sql`create table webhook_deliveries_026 (
          id text primary key,
          app_id text not null references app_webhooks (app_id) on delete cascade,
          installation_id integer not null,
          workspace_id integer not null,
          job_id text,
          event text not null,
          occurred_at text not null,
          created_at text not null,
          status text not null,
          attempts integer not null default 0,
          next_attempt_at bigint not null,
          give_up_at bigint not null,
          lease_owner text,
          lease_expires_at bigint,
          last_attempt_at text,
          last_status_code integer,
          last_error text,
          delivered_at text)`.execute(db);
        await sql
          .raw(`insert into webhook_deliveries_026 (${COLUMNS}) select ${COLUMNS} from webhook_deliveries`)
          .execute(db);
        await sql`drop table webhook_deliveries`.execute(db);
        await sql`alter table webhook_deliveries_026 rename to webhook_deliveries`.execute(db);
        await sql`create index webhook_deliveries_due on webhook_deliveries (status, next_attempt_at)`.execute(
          db,
        );
        await sql`create index webhook_deliveries_app on webhook_deliveries (app_id, created_at, id)`.execute(
          db,
        );
        break;
    }
    await sql`alter table webhook_deliveries add column dataset_id text`.execute(db);
    await sql`alter table webhook_deliveries add column generation integer`.execute(db);
  },
};
