// `dx migrate --check` as an init container runs it: exit 0 when the schema is current, 3 when
// migrations are pending (named), 1 when the database cannot be reached; it never applies anything.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { MIGRATIONS, LEDGER_TABLE } from '../../src/storage/db/migrate.js';
import {
  POSTGRES_URL,
  dropPostgresSchema,
  forEachDatabase,
  postgresUrlIn,
  type DatabaseName,
} from '../support/databases.js';

const BIN = join(process.cwd(), 'bin', 'dx.js');
const ALL = Object.keys(MIGRATIONS).sort();
const LAST = ALL[ALL.length - 1]!;
const run = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `dx` with DATABASE_URL set and returns its exit code and output, failing or not. */
async function dx(databaseUrl: string, ...args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr };
  }
}

interface CheckAnswer {
  current: boolean;
  pending: string[];
  unknown: string[];
}

async function check(databaseUrl: string): Promise<{ code: number; answer: CheckAnswer }> {
  const out = await dx(databaseUrl, 'migrate', '--check', '--json');
  return { code: out.code, answer: JSON.parse(out.stdout) as CheckAnswer };
}

/** A fresh, empty database of the engine: its URL, a way to run SQL on it, and its disposal. */
interface EmptyDatabase {
  url: string;
  /** Whether the database holds anything at all (a file, or a table in the schema). */
  isEmpty(): Promise<boolean>;
  query(text: string, values?: unknown[]): Promise<unknown[]>;
  dispose(): Promise<void>;
}

async function emptyDatabase(engine: DatabaseName): Promise<EmptyDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'dx-migrate-check-'));
    const file = join(dir, 'dx.sqlite');
    const { default: Sqlite } = await import('better-sqlite3');
    return {
      url: `sqlite:${file}`,
      isEmpty: () => Promise.resolve(!existsSync(file)),
      query: (text, values = []) => {
        const conn = new Sqlite(file);
        try {
          const statement = conn.prepare(text);
          return Promise.resolve(statement.reader ? statement.all(...values) : [statement.run(...values)]);
        } finally {
          conn.close();
        }
      },
      dispose: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const schema = `mc_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`create schema "${schema}"`);
  await client.query(`set search_path = "${schema}"`);
  return {
    url: postgresUrlIn(schema),
    isEmpty: async () =>
      (await client.query('select 1 from pg_tables where schemaname = $1', [schema])).rowCount === 0,
    query: async (text, values = []) => (await client.query(text, values)).rows as unknown[],
    dispose: async () => {
      await client.end();
      await dropPostgresSchema(schema);
    },
  };
}

await forEachDatabase('dx migrate --check', (target) => {
  const disposers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const dispose of disposers) await dispose();
  });
  const fresh = async () => {
    const database = await emptyDatabase(target.name);
    disposers.push(() => database.dispose());
    return database;
  };

  void it('on a database never migrated: exit 3, every migration named, nothing created', async () => {
    const database = await fresh();
    const text = await dx(database.url, 'migrate', '--check');
    assert.equal(text.code, 3, text.stderr);
    assert.match(text.stdout, /^Pending migrations \(run `dx migrate`\): /);
    for (const name of ALL) assert.ok(text.stdout.includes(name), `${name} is named`);
    const { code, answer } = await check(database.url);
    assert.equal(code, 3);
    assert.deepEqual(answer, { current: false, pending: ALL, unknown: [] });
    assert.ok(await database.isEmpty(), 'the check created nothing (no file, no ledger table)');
  });

  void it('after dx migrate: exit 0; with the last migration missing: exit 3 naming it, still missing after', async () => {
    const database = await fresh();
    assert.equal((await dx(database.url, 'migrate')).code, 0);
    const current = await dx(database.url, 'migrate', '--check');
    assert.equal(current.code, 0, current.stderr);
    assert.equal(current.stdout.trim(), 'Database schema is current.');

    // What a pod of a newer version sees before the migration job has run: one migration behind.
    await database.query(
      `delete from ${LEDGER_TABLE} where name = ${target.name === 'sqlite' ? '?' : '$1'}`,
      [LAST],
    );
    for (let i = 0; i < 2; i++) {
      const { code, answer } = await check(database.url);
      assert.equal(code, 3);
      assert.deepEqual(answer, { current: false, pending: [LAST], unknown: [] });
    }
    const ledger = (await database.query(`select name from ${LEDGER_TABLE}`)) as { name: string }[];
    assert.deepEqual(ledger.map((r) => r.name).sort(), ALL.slice(0, -1), 'the check applied nothing');
  });

  void it('a schema migrated further by a newer version is current for older code (exit 0, names the extra)', async () => {
    const database = await fresh();
    assert.equal((await dx(database.url, 'migrate')).code, 0);
    const p = target.name === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
    await database.query(`insert into ${LEDGER_TABLE} (name, applied_at) values (${p[0]}, ${p[1]})`, [
      '999_from_a_newer_version',
      new Date().toISOString(),
    ]);
    const { code, answer } = await check(database.url);
    assert.equal(code, 0);
    assert.deepEqual(answer, { current: true, pending: [], unknown: ['999_from_a_newer_version'] });
    const text = await dx(database.url, 'migrate', '--check');
    assert.match(text.stdout, /Applied by a newer version, unknown to this one: 999_from_a_newer_version/);
  });
});

void it('dx migrate --check exits 1, not 3, when the database cannot be reached', async () => {
  const out = await dx('postgres://postgres@127.0.0.1:1/test', 'migrate', '--check');
  assert.equal(out.code, 1);
  assert.match(
    out.stderr,
    /^dx: cannot open the database postgres:\/\/postgres@127\.0\.0\.1:1\/test: nothing listens there/,
  );
});
