// SQLite files: transactions beside another process's writer take the write lock when they begin,
// so they wait instead of failing at once with "database is locked", and they wait with the event
// loop running; and the files are readable by the service's user only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase, openSqliteConnection } from './database.js';

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

test("a write waits for another connection's lock with the event loop running, then goes through", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-sqlite-wait-'));
  const file = join(dir, 'dx.sqlite');
  const service = await openDatabase(`sqlite:${file}`);
  const other = openSqliteConnection(file, 'service');
  try {
    await sql`create table t (x integer)`.execute(service.db);
    other.exec('begin immediate'); // another thread's load, say, holds the write lock
    other.exec('insert into t values (1)');
    const order: string[] = [];
    const write = sql`insert into t values (2)`.execute(service.db).then(() => order.push('write'));
    // SQLite's own busy handler would sleep here with the event loop held: no timer could fire.
    await sleep(100);
    order.push('timer');
    other.exec('commit');
    await write;
    assert.deepEqual(order, ['timer', 'write']);
    const rows = await sql<{ x: number }>`select x from t order by x`.execute(service.db);
    assert.deepEqual(
      rows.rows.map((r) => r.x),
      [1, 2],
    );
  } finally {
    other.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the database, its WAL and shared-memory files are readable by their owner only, whatever the umask', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-sqlite-mode-'));
  const previous = process.umask(0o022);
  try {
    const fresh = join(dir, 'fresh.sqlite');
    const database = await openDatabase(`sqlite:${fresh}`);
    await sql`create table t (x integer)`.execute(database.db);
    await sql`insert into t values (1)`.execute(database.db);
    for (const path of [fresh, `${fresh}-wal`, `${fresh}-shm`])
      assert.equal((statSync(path).mode & 0o777).toString(8), '600', path);
    await database.close();

    // A file made before, under the usual umask, is made private when its owner opens it.
    const older = join(dir, 'older.sqlite');
    writeFileSync(older, '', { mode: 0o644 });
    const reopened = await openDatabase(`sqlite:${older}`);
    await sql`create table t (x integer)`.execute(reopened.db);
    assert.equal((statSync(older).mode & 0o777).toString(8), '600');
    assert.equal((statSync(`${older}-wal`).mode & 0o777).toString(8), '600');
    await reopened.close();
  } finally {
    process.umask(previous);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a connection that passes over a table once keeps a small page cache; the service keeps a larger one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-sqlite-cache-'));
  const file = join(dir, 'dx.sqlite');
  const service = openSqliteConnection(file, 'service');
  const pass = openSqliteConnection(file, 'pass');
  try {
    // Negative: KiB. A load's writer, an export or a key build each open a 'pass' connection.
    assert.equal(pass.pragma('cache_size', { simple: true }), -2000);
    assert.equal(service.pragma('cache_size', { simple: true }), -16000);
  } finally {
    service.close();
    pass.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
