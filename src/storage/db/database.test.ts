// SQLite transactions beside another process's writer: they take the write lock when they begin,
// so busy_timeout can make them wait instead of failing at once with "database is locked".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from './database.js';

test('a transaction that reads and then writes is not refused because another connection wrote', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-sqlite-tx-'));
  const cli = await openDatabase(`sqlite:${join(dir, 'dx.sqlite')}`);
  const service = await openDatabase(`sqlite:${join(dir, 'dx.sqlite')}`);
  try {
    await sql`create table t (x integer)`.execute(service.db);
    const serviceConn = service.engine.kind === 'sqlite' ? service.engine.connection : null;
    assert.ok(serviceConn !== null);
    serviceConn.pragma('busy_timeout = 0'); // the other writer, here, gives up at once instead of waiting
    let otherWriter: unknown = null;
    await cli.db.transaction().execute(async (trx) => {
      await sql`select count(*) from t`.execute(trx); // a snapshot is read first…
      try {
        serviceConn.prepare('insert into t values (1)').run(); // …another connection writes…
      } catch (err) {
        otherWriter = err;
      }
      await sql`insert into t values (2)`.execute(trx); // …and this write must still go through
    });
    // The transaction held the write lock from its start, so it was the other writer that waited
    // (here, with no patience, gave up); a deferred transaction would have failed with SQLITE_BUSY.
    assert.match(String((otherWriter as { code?: string } | null)?.code), /SQLITE_BUSY/);
    const rows = await sql<{ x: number }>`select x from t`.execute(service.db);
    assert.deepEqual(
      rows.rows.map((r) => r.x),
      [2],
    );
  } finally {
    await cli.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
