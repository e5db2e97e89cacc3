// Schema changes (PATCH /datasets/{id} with a schema; docs/loading.md, "Changing a schema"): each
// dataset counts its schema's versions, remembers what the last change did (a load that ran across
// it fails naming it), and a download link keeps the properties of the schema it was made under,
// since the table it pins has that schema's columns. Links made before have none: the dataset's
// schema, which was theirs, serves.
import { sql } from 'kysely';
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await sql`alter table datasets add column schema_version integer not null default 1`.execute(db);
    await db.schema.alterTable('dataset_schemas').addColumn('last_change', 'text').execute();
    await db.schema.alterTable('dataset_export_links').addColumn('properties', 'text').execute();
  },
};
