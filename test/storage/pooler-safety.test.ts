// What the record store sends PostgreSQL must hold behind a pooler in transaction mode (PgBouncer,
// deploy/README.md): nothing that outlives its transaction on the server connection. A session
// SET, LISTEN, PREPARE, a cursor WITH HOLD or a temporary table would stay on whichever server
// connection ran it, for the next client that gets it, while this client's next statement may run
// on another. Every statement of a load (all its paths) and of an export is checked.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { openDatabase, type Database } from '../../src/storage/db/database.js';
import { PostgresRecordStore } from '../../src/storage/records/postgres.js';
import { stagingTableName, type CellValue, type TableSchema } from '../../src/storage/records/index.js';
import { onDatabase, type IsolatedDatabase } from '../support/databases.js';

const DATASET = '0a1b2c3d-0000-4000-8000-0000000000aa';
const SCHEMA: TableSchema = {
  columns: [
    { name: 'id', kind: 'int64' },
    { name: 'name', kind: 'text' },
  ],
  primaryKey: ['id'],
};

/** The statements of a query's text that keep state in the session beyond their transaction. */
function sessionLevelStatements(text: string): string[] {
  return text
    .split(';')
    .map((s) => s.trim().replace(/\s+/g, ' '))
    .filter(
      (s) =>
        (/^(set|reset)\b/i.test(s) && !/^set local\b/i.test(s)) ||
        /^(listen|prepare|discard|load)\b/i.test(s) ||
        /^declare\b.*\bwith hold\b/i.test(s) ||
        /^create (global |local )?temp(orary)? table\b/i.test(s) ||
        /\bpg_advisory_lock\b|\bset_config\([^)]*,\s*false\s*\)/i.test(s),
    );
}

let jobs = 0;
const tableName = () =>
  stagingTableName(DATASET, `${String(++jobs).padStart(8, '0')}-0000-4000-8000-000000000000`);

await onDatabase('postgres', 'record store behind a transaction-mode pooler', (target) => {
  let isolated: IsolatedDatabase;
  let own: Database;
  let store: PostgresRecordStore;
  const sent: string[] = [];
  before(async () => {
    isolated = await target.create();
    // A handle of its own, whose pool has made no client yet: each one it makes is watched.
    own = await openDatabase(isolated.url, { schema: isolated.schema ?? undefined, maxConnections: 2 });
    if (own.engine.kind !== 'postgres') throw new Error('PostgreSQL only');
    const pool = own.engine.pool;
    // Every client the pool makes records the text of each query it is given.
    pool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
        const first = args[0];
        sent.push(typeof first === 'string' ? first : String((first as { text?: string }).text ?? ''));
        return query(...args);
      };
    });
    store = new PostgresRecordStore(pool, own.db);
  });
  after(async () => {
    await own?.close();
    await isolated?.dispose();
  });

  const load = async (rows: CellValue[][], copyFrom?: string) => {
    const table = tableName();
    const writer = await store.createStaging(table, SCHEMA, undefined, copyFrom ? { copyFrom } : {});
    await writer.write(rows);
    return { table, result: await writer.finish() };
  };

  void it('a load (plain, with duplicate keys, over a copied table) and an export keep no session state', async () => {
    sent.length = 0;
    const first = await load([
      [1, 'a'],
      [2, 'b'],
      [2, 'b2'],
    ]);
    assert.equal(first.result.duplicatesCollapsed, 1);
    const second = await load([[2, 'B']], first.table);
    assert.equal(second.result.rowsReplaced, 1);
    const text = await new Promise<string>((resolve, reject) => {
      let out = '';
      const stream: Readable = store.streamText(second.table, SCHEMA, 'csv');
      stream.on('data', (chunk: Buffer) => (out += chunk.toString()));
      stream.on('end', () => resolve(out));
      stream.on('error', reject);
    });
    assert.equal(text, '1,a\r\n2,B\r\n');
    // The spy saw the work: the key builds, the replacing delete, the export's COPY.
    assert.ok(sent.some((s) => /add primary key/.test(s)));
    assert.ok(sent.some((s) => /^\s*delete from/.test(s)));
    assert.ok(sent.some((s) => /to stdout/.test(s)));
    assert.deepEqual(sent.flatMap(sessionLevelStatements), []);
  });

  void it('tells a session-level statement from a transaction-level one', () => {
    assert.deepEqual(sessionLevelStatements(`set maintenance_work_mem = '256MB'`), [
      `set maintenance_work_mem = '256MB'`,
    ]);
    assert.deepEqual(sessionLevelStatements('reset jit'), ['reset jit']);
    assert.deepEqual(sessionLevelStatements(`begin; set local jit = off; select 1`), []);
    assert.deepEqual(sessionLevelStatements('select pg_advisory_xact_lock(1)'), []);
    assert.deepEqual(sessionLevelStatements('select pg_advisory_lock(1)'), ['select pg_advisory_lock(1)']);
  });
});
