// The record store's text of a table (streamText). PostgreSQL's side: COPY's text lines rendered as
// CSV and JSON lines, its float8 text as JavaScript's, checked on many doubles against the server.
// SQLite's side: rendered on a thread, in key order whether the rows lie in it or not, handed over
// as the reader asks, with the event loop free meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { onDatabase, POSTGRES_URL } from '../support/databases.js';
import { countEventLoopTurns } from '../support/event-loop.js';
import { copyRows, LinesFromCopyText } from '../../src/storage/records/text-postgres.js';
import { keyOrderRead, sqliteText } from '../../src/storage/records/text-sqlite.js';

/** Doubles of every magnitude and notation, and random bit patterns (finite ones). */
function doubles(): number[] {
  const out = [0, -0, 1, -1, 0.1, 0.1 + 0.2, 1 / 3, 2 ** 53, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE];
  for (let e = -325; e <= 308; e++) out.push(Number(`1e${e}`), Number(`-1.2345678901234567e${e}`));
  for (let e = -8; e <= 22; e++)
    out.push(Number(`1e${e}`) * (1 - Number.EPSILON), Number(`1e${e}`) * (1 + Number.EPSILON));
  const view = new DataView(new ArrayBuffer(8));
  let seed = 12345;
  while (out.length < 4000) {
    for (let i = 0; i < 8; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      view.setUint8(i, seed >> 16);
    }
    const v = view.getFloat64(0);
    if (Number.isFinite(v)) out.push(v);
  }
  return out.filter((v) => Number.isFinite(v));
}

await onDatabase('postgres', 'text export: float8 as JavaScript writes it', () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query('set extra_float_digits = 1');
  });
  after(() => client.end());

  void it('renders every double as String(n), in CSV and in JSON lines', async () => {
    const values = doubles();
    // Sent as text that parses back to the same double (String(n) round-trips).
    const res = await client.query<{ t: string }>(
      `select v::text as t from unnest($1::float8[]) with ordinality as u(v, n) order by n`,
      [values.map(String)],
    );
    const copy = Buffer.from(res.rows.map((r) => `${r.t}\n`).join(''));
    const schema = { columns: [{ name: 'x', kind: 'float64' as const }], primaryKey: [] };
    const csv = new LinesFromCopyText(schema, 'csv').convert(copy).toString().split('\r\n');
    const json = new LinesFromCopyText(schema, 'ndjson').convert(copy).toString().split('\n');
    const wrong = values
      .map((v, i) => ({ csv: csv[i], json: json[i], want: String(v) }))
      .filter((x) => x.csv !== x.want || x.json !== JSON.stringify({ x: Number(x.want) }));
    assert.deepEqual(wrong.slice(0, 5), []);
    assert.equal(csv.length, values.length + 1);
    assert.equal(json.length, values.length + 1);
  });
});

await onDatabase('postgres', 'text export: rows of a query through COPY', () => {
  let pool: pg.Pool;
  before(() => {
    pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  });
  after(() => pool.end());

  void it('makes every row, lines and characters cut across chunks, escapes undone, nulls as null', async () => {
    // ~6 MB of text in many chunks; a 2- and a 4-byte character repeated, so cuts fall inside them.
    const rows = await copyRows(
      pool,
      `select i, repeat('ü🙂', 200 + i % 7) || E'\\t\\n', case when i % 3 = 0 then null else 'x' end
         from generate_series(1, 2000) i order by i`,
      // The fields' array is refilled for each row: what is kept is a copy.
      (fields) => [...fields],
    );
    assert.equal(rows.length, 2000);
    const wrong = rows.filter(
      ([i, s, x], n) =>
        i !== String(n + 1) ||
        s !== `${'ü🙂'.repeat(200 + ((n + 1) % 7))}\t\n` ||
        x !== ((n + 1) % 3 === 0 ? null : 'x'),
    );
    assert.deepEqual(wrong.slice(0, 2), []);
  });
});

const SCHEMA = {
  columns: [
    { name: 'id', kind: 'int64' as const },
    { name: 's', kind: 'text' as const },
    { name: 'ok', kind: 'boolean' as const },
    { name: 'x', kind: 'float64' as const },
  ],
  primaryKey: ['id'],
};
/** COPY text: escapes of every kind, a character of 2 and one of 4 bytes, nulls and an empty string. */
const COPY = '1\ta\\tb\\nc\\\\d\\be\\ff\\vg\\rh, "ü🙂"\tt\t-0\n2\t\\N\tf\t1e-05\n3\t\t\\N\t\\N\n';
const S = 'a\tb\nc\\d\be\ff\vg\rh, "ü🙂"';

/** The lines of `copy` in `format`, with the bytes cut in two at `cut`. */
function inTwoChunks(format: 'csv' | 'ndjson', copy: Buffer, cut: number): string {
  const lines = new LinesFromCopyText(SCHEMA, format);
  return Buffer.concat([lines.convert(copy.subarray(0, cut)), lines.convert(copy.subarray(cut))]).toString();
}

void it('COPY text as JSON lines: escapes undone, nulls, every kind, lines cut anywhere across chunks', () => {
  const expected = [
    { id: 1, s: S, ok: true, x: 0 },
    { id: 2, s: null, ok: false, x: 0.00001 },
    { id: 3, s: '', ok: null, x: null },
  ]
    .map((r) => `${JSON.stringify(r)}\n`)
    .join('');
  const bytes = Buffer.from(COPY);
  for (let cut = 0; cut <= bytes.length; cut++)
    assert.equal(inTwoChunks('ndjson', bytes, cut), expected, `cut at ${cut}`);
  const none = new LinesFromCopyText({ columns: [], primaryKey: [] }, 'ndjson');
  assert.equal(none.convert(Buffer.from('\n\n')).toString(), '{}\n{}\n');
});

void it('COPY text as CSV: quoted where RFC 4180 needs it, null an empty field, CRLF, cut anywhere', () => {
  const expected = `1,"${S.replace(/"/g, '""')}",true,0\r\n2,,false,0.00001\r\n3,,,\r\n`;
  const bytes = Buffer.from(COPY);
  for (let cut = 0; cut <= bytes.length; cut++)
    assert.equal(inTwoChunks('csv', bytes, cut), expected, `cut at ${cut}`);
  const none = new LinesFromCopyText({ columns: [], primaryKey: [] }, 'csv');
  assert.equal(none.convert(Buffer.from('\n')).toString(), '\r\n');
});

void it("SQLite's text gives the event loop a turn between pieces, however fast the reader takes them", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
  try {
    const file = tableFile(dir, 20_000);
    // The turns while the text is read as fast as it comes.
    const turns = countEventLoopTurns();
    let pieces = 0;
    let lines = 0;
    for await (const chunk of sqliteText(file, 't', SCHEMA, 'ndjson') as AsyncIterable<Buffer>) {
      pieces++;
      lines += chunk.toString().split('\n').length - 1;
    }
    const counted = turns.stop();
    assert.equal(lines, 20_000);
    assert.ok(pieces > 10, `${pieces} pieces`);
    // A turn at least between every two pieces: other requests and timers are not held until the end.
    assert.ok(counted >= pieces - 1, `${counted} turns of the event loop for ${pieces} pieces`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A file holding table t of SCHEMA's shape as the service makes it (rows numbered in `#row`, the
 * key a unique index) with `rows` rows, in WAL mode; `order` gives the key of each row number
 * (default: the row number). Returns its path.
 */
function tableFile(dir: string, rows: number, order: (row: number) => number = (row) => row): string {
  const file = join(dir, 'records.db');
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.exec('create table t ("#row" integer primary key, id integer, s text, ok integer, x real)');
  const insert = db.prepare('insert into t values (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let row = 1; row <= rows; row++) {
      const i = order(row);
      insert.run(row, i, `row ${i} ${'·'.repeat(20)}`, i % 2, i / 7);
    }
  })();
  db.exec('create unique index t_key on t (id)');
  db.close();
  return file;
}

/** The keys 1..n in a fixed pseudo-random order: shuffled(n)[row - 1] is the key of a row. */
function shuffled(n: number): number[] {
  const keys = Array.from({ length: n }, (_, i) => i + 1);
  let seed = 7;
  for (let i = n - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [keys[i], keys[j]] = [keys[j] as number, keys[i] as number];
  }
  return keys;
}

async function textOf(file: string, format: 'csv' | 'ndjson'): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of sqliteText(file, 't', SCHEMA, format) as AsyncIterable<Buffer>)
    chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

void it("SQLite's text is in key order whether the rows lie in it or not, read along the key or sorted", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
  const rows = 30_000;
  const expected = Array.from({ length: rows }, (_, i) => `${i + 1},row ${i + 1} ${'·'.repeat(20)},`);
  try {
    const keys = shuffled(rows);
    const all = Array.from({ length: rows }, (_, i) => i + 1);
    const rewritten = [...all.filter((k) => k % 100 !== 0), ...all.filter((k) => k % 100 === 0)];
    for (const [name, order, read] of [
      ['in key order', (row: number) => row, 'index'],
      ['in random order', (row: number) => keys[row - 1] as number, 'sort'],
      // A file loaded in order, then a hundredth of its records written again (an upsert moves each to the end).
      ['in order but for records written again', (row: number) => rewritten[row - 1] as number, 'index'],
    ] as const) {
      rmSync(join(dir, 'records.db'), { force: true });
      const file = tableFile(dir, rows, order);
      const conn = new BetterSqlite3(file, { readonly: true });
      try {
        assert.equal(keyOrderRead(conn, 't', SCHEMA), read, name);
      } finally {
        conn.close();
      }
      const lines = (await textOf(file, 'csv')).split('\r\n');
      assert.equal(lines.length, rows + 1, name);
      const wrong = lines.slice(0, rows).filter((line, i) => !line.startsWith(expected[i] as string));
      assert.deepEqual(wrong.slice(0, 3), [], name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

void it("SQLite's text of a table with a key of two columns, its rows in random order, is in key order", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
  const schema = {
    columns: [
      { name: 'a', kind: 'text' as const },
      { name: 'b', kind: 'int64' as const },
    ],
    primaryKey: ['a', 'b'],
  };
  try {
    const file = join(dir, 'records.db');
    const db = new BetterSqlite3(file);
    db.exec('create table t ("#row" integer primary key, a text, b integer)');
    const keys = shuffled(20_000);
    const insert = db.prepare('insert into t values (?, ?, ?)');
    db.transaction(() => keys.forEach((k, i) => insert.run(i + 1, `k${k % 50}`, k)))();
    db.exec('create unique index t_key on t (a, b)');
    assert.equal(keyOrderRead(db, 't', schema), 'sort');
    db.close();
    const chunks: Buffer[] = [];
    for await (const chunk of sqliteText(file, 't', schema, 'ndjson') as AsyncIterable<Buffer>)
      chunks.push(chunk);
    const read = Buffer.concat(chunks)
      .toString()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { a: string; b: number });
    const sorted = [...read].sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b - y.b));
    assert.equal(read.length, 20_000);
    assert.deepEqual(read, sorted);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

void it("SQLite's text of an empty table, and of a table without a key, in row order", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
  try {
    const file = tableFile(dir, 0);
    assert.equal(await textOf(file, 'csv'), '');
    const db = new BetterSqlite3(file);
    db.exec('drop index t_key');
    const insert = db.prepare('insert into t values (?, ?, ?, ?, ?)');
    for (const [row, id] of [
      [3, 30],
      [1, 10],
      [2, 20],
    ])
      insert.run(row, id, 's', 1, 0);
    db.close();
    const noKey = { ...SCHEMA, primaryKey: [] };
    const chunks: Buffer[] = [];
    for await (const chunk of sqliteText(file, 't', noKey, 'csv') as AsyncIterable<Buffer>)
      chunks.push(chunk);
    assert.equal(Buffer.concat(chunks).toString(), '10,s,true,0\r\n20,s,true,0\r\n30,s,true,0\r\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const [where, order] of [
  ['along the key', undefined],
  ['sorted, on a thread', (row: number) => 50_001 - row],
] as const) {
  void it(`SQLite's text read ${where}: a reader that stops early ends the read and releases its snapshot`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
    const writer = new BetterSqlite3(tableFile(dir, 50_000, order), { timeout: 0 });
    const text = sqliteText(join(dir, 'records.db'), 't', SCHEMA, 'csv');
    try {
      const first = (await text[Symbol.asyncIterator]().next()) as IteratorResult<Buffer>;
      assert.match(first.value.toString(), /^1,row 1 /);
      // A write after the reader's snapshot: a full checkpoint must wait for that reader.
      writer.prepare('insert into t values (?, ?, ?, ?, ?)').run(1e9, 1e9, 'late', 0, 0);
      const busy = () => (writer.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0]?.busy;
      assert.equal(busy(), 1, 'the reader holds its snapshot while it reads');
      text.destroy();
      const until = Date.now() + 5000;
      while (busy() !== 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      assert.equal(busy(), 0, 'the snapshot is released once the reader stopped');
    } finally {
      text.destroy();
      writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

void it("SQLite's text: an error of the thread's read reaches the stream, with SQLite's code", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
  try {
    // Rows in reverse key order: read sorted, on a thread, where the column missing fails the statement.
    const file = tableFile(dir, 1000, (row) => 1001 - row);
    const schema = { ...SCHEMA, columns: [...SCHEMA.columns, { name: 'missing', kind: 'text' as const }] };
    await assert.rejects(
      async () => {
        for await (const _ of sqliteText(file, 't', schema, 'csv'));
      },
      { code: 'SQLITE_ERROR', message: /no such column: "missing"/ },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

void it("SQLite's text: an error of the read reaches the stream, with SQLite's code", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-text-'));
  try {
    const text = sqliteText(tableFile(dir, 1), 'missing', SCHEMA, 'ndjson');
    await assert.rejects(
      async () => {
        for await (const _ of text);
      },
      { code: 'SQLITE_ERROR', message: /no such table: missing/ },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
