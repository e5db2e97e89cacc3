// The migration runner: once each, safe for concurrent starters, unaffected by tables that other
// work creates and drops while it runs.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Database } from '../../src/storage/db/database.js';
import { LEDGER_TABLE, MIGRATIONS, migrateToLatest } from '../../src/storage/db/migrate.js';
import { POSTGRES_URL, dropPostgresSchema, forEachDatabase, postgresUrlIn } from '../support/databases.js';

const ALL = Object.keys(MIGRATIONS).sort();
const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');

/** Opens `count` handles on one fresh, unmigrated database of the target's engine. */
async function freshHandles(kind: 'sqlite' | 'postgres', count: number) {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'dx-migrate-'));
    const url = `sqlite:${join(dir, 'dx.sqlite')}`;
    const handles = await Promise.all(Array.from({ length: count }, () => openDatabase(url)));
    return {
      handles,
      url,
      dispose: async () => {
        await Promise.all(handles.map((h) => h.close()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `m_${randomBytes(6).toString('hex')}`;
  const handles: Database[] = [];
  for (let i = 0; i < count; i++)
    handles.push(await openDatabase(POSTGRES_URL, { schema, maxConnections: 2 }));
  return {
    handles,
    url: postgresUrlIn(schema),
    dispose: async () => {
      await Promise.all(handles.map((h) => h.close()));
      await dropPostgresSchema(schema);
    },
  };
}

async function ledger(database: Database): Promise<string[]> {
  const { rows } = await sql<{
    name: string;
  }>`select name from ${sql.table(LEDGER_TABLE)} order by name`.execute(database.db);
  return rows.map((r) => r.name);
}

await forEachDatabase('migrations', (target) => {
  const disposers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const d of disposers) await d();
  });

  void it('applies every migration once, in order, and nothing on a second run', async () => {
    const { handles, dispose } = await freshHandles(target.name, 1);
    disposers.push(dispose);
    const [db] = handles as [Database];
    assert.deepEqual(await migrateToLatest(db), ALL);
    assert.deepEqual(await migrateToLatest(db), []);
    assert.deepEqual(await ledger(db), ALL);
    // The schema is really there: a table of the last migration answers.
    await sql`select count(*) from dataset_jobs`.execute(db.db);
  });

  void it("024 carries the console's open counting windows into one table, each with its own end", async () => {
    const { handles, dispose } = await freshHandles(target.name, 1);
    disposers.push(dispose);
    const [database] = handles as [Database];
    const db = database.db as unknown as Kysely<unknown>;
    for (const name of ALL.filter((n) => n < '024')) await MIGRATIONS[name]?.up(db, target.name);
    await sql`insert into console_sign_in_failures (key, failures, window_start_ms) values ('a', 4, 1000)`.execute(
      db,
    );
    await sql`insert into console_reset_requests (key, requests, window_start_ms) values ('b', 2, 2000)`.execute(
      db,
    );
    await MIGRATIONS['024_console_rate_windows']?.up(db, target.name);
    const { rows } = await sql<{ key: string; count: number; window_end_ms: number | string }>`
      select key, count, window_end_ms from console_rate_windows order by key`.execute(db);
    assert.deepEqual(
      rows.map((r) => [r.key, Number(r.count), Number(r.window_end_ms)]),
      [
        ['a', 4, 1000 + 15 * 60 * 1000],
        ['b', 2, 2000 + 60 * 60 * 1000],
      ],
    );
    await assert.rejects(sql`select 1 from console_sign_in_failures`.execute(db));
    await assert.rejects(sql`select 1 from console_reset_requests`.execute(db));
  });

  void it('026 keeps the webhook deliveries it rebuilds (SQLite) and lets a delivery be of a dataset', async () => {
    const { handles, dispose } = await freshHandles(target.name, 1);
    disposers.push(dispose);
    const [database] = handles as [Database];
    const db = database.db as unknown as Kysely<unknown>;
    for (const name of ALL.filter((n) => n < '026')) await MIGRATIONS[name]?.up(db, target.name);
    // A delivery of an earlier version; its app and webhook rows are beside the point here.
    if (target.name === 'sqlite') await sql`pragma foreign_keys = off`.execute(db);
    else await sql`alter table webhook_deliveries drop constraint webhook_deliveries_app_id_fkey`.execute(db);
    await sql`insert into webhook_deliveries (id, app_id, installation_id, workspace_id, job_id, event,
      occurred_at, created_at, status, attempts, next_attempt_at, give_up_at, last_status_code)
      values ('d1', 'app', 1, 2, 'job', 'dataset.job.completed', 't1', 't2', 'delivered', 3, 10, 20, 204)`.execute(
      db,
    );
    await MIGRATIONS['026_dataset_webhooks']?.up(db, target.name);
    const { rows } = await sql<Record<string, unknown>>`
      select id, job_id, event, attempts, last_status_code, dataset_id, generation from webhook_deliveries`.execute(
      db,
    );
    assert.deepEqual(
      rows.map((r) => [
        r.id,
        r.job_id,
        r.event,
        Number(r.attempts),
        Number(r.last_status_code),
        r.dataset_id,
        r.generation,
      ]),
      [['d1', 'job', 'dataset.job.completed', 3, 204, null, null]],
    );
    await sql`insert into webhook_deliveries (id, app_id, installation_id, workspace_id, dataset_id, generation,
      event, occurred_at, created_at, status, next_attempt_at, give_up_at)
      values ('d2', 'app', 1, 2, 'ds', 7, 'dataset.changed', 't', 't', 'pending', 1, 2)`.execute(db);
  });

  void it('concurrent starters (dx migrate processes) apply each migration exactly once between them', async () => {
    const { handles, url, dispose } = await freshHandles(target.name, 1);
    disposers.push(dispose);
    const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' };
    const outputs = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, [BIN, 'migrate', '--json'], { env })),
    );
    const applied = outputs.map((o) => (JSON.parse(o.stdout) as { applied: string[] }).applied);
    assert.deepEqual(applied.flat().sort(), ALL);
    assert.deepEqual(await ledger(handles[0]!), ALL);
  });

  // PostgreSQL only: there, a catalogue scan that resolves tables by name failed when another
  // session dropped one mid-scan. SQLite writers simply queue on the file's lock.
  if (target.name === 'postgres')
    void it('is not disturbed by tables created and dropped while it runs', async () => {
      const { handles, dispose } = await freshHandles(target.name, 2);
      disposers.push(dispose);
      const [runner, churner] = handles as [Database, Database];
      let stop = false;
      let churned = 0;
      // What a worker does when it swaps a dataset's records: create a table, drop the old one.
      const churn = (async () => {
        while (!stop) {
          const name = `rec_churn_${churned++ % 4}`;
          await sql`create table if not exists ${sql.table(name)} (a integer, b text)`.execute(churner.db);
          await sql`drop table if exists ${sql.table(name)}`.execute(churner.db);
        }
      })();
      try {
        assert.deepEqual(await migrateToLatest(runner), ALL);
        for (let i = 0; i < 20; i++) assert.deepEqual(await migrateToLatest(runner), []);
      } finally {
        stop = true;
        await churn;
      }
      assert.ok(churned > 0, 'the churn ran beside the migrations');
    });
});
