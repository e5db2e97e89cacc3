// Picks the record store of the database engine.
import type { Database } from '../db/database.js';
import { PostgresRecordStore } from './postgres.js';
import type { RecordStore } from './record-store.js';
import { SqliteRecordStore } from './sqlite.js';

export * from './record-store.js';

/** The record store that writes into the same database as the metadata. */
export function createRecordStore(database: Database): RecordStore {
  const engine = database.engine;
  switch (engine.kind) {
    case 'sqlite':
      return new SqliteRecordStore(engine.file, database.db);
    case 'postgres':
      return new PostgresRecordStore(engine.pool, database.db);
  }
}
