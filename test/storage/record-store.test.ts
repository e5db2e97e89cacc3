// The record store's contract, the same suite on SQLite and PostgreSQL: staging tables and their
// counts, values kept exactly, keyset pages, whole-table reads, listing and dropping.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createRecordStore,
  InvalidPosition,
  changesTableName,
  stagingTableName,
  type CellValue,
  type ChangeRow,
  type KeysetPosition,
  type PageQuery,
  type ReadValue,
  type RecordStore,
  type TableSchema,
} from '../../src/storage/records/index.js';
import { MAX_PROPERTIES } from '../../src/domain/datasets/schema.js';
import type { Database } from '../../src/storage/db/database.js';
import { SqliteRecordStore } from '../../src/storage/records/sqlite.js';
import {
  forEachDatabase,
  onDatabase,
  type DatabaseTarget,
  type IsolatedDatabase,
} from '../support/databases.js';
import { countEventLoopTurns } from '../support/event-loop.js';

const DATASET = '0a1b2c3d-0000-4000-8000-000000000001';
const OTHER_DATASET = '0a1b2c3d-0000-4000-8000-000000000002';

/** Columns of every value kind, keys of the change tests' schemas. */
const EVERY_KIND: TableSchema['columns'] = [
  { name: 'region', kind: 'text' },
  { name: 'flag', kind: 'boolean' },
  { name: 'x', kind: 'float64' },
  { name: 'n', kind: 'int64' },
  { name: 'note', kind: 'text' },
];

const KEYED: TableSchema = {
  columns: [
    { name: 'id', kind: 'int64' },
    { name: 'name', kind: 'text' },
    { name: 'ok', kind: 'boolean' },
    { name: 'score', kind: 'float64' },
  ],
  primaryKey: ['id'],
};

let jobCounter = 0;
/** A fresh table name of the dataset, as a load job would get one. */
function tableOf(datasetId = DATASET): string {
  jobCounter++;
  return stagingTableName(datasetId, `${String(jobCounter).padStart(8, '0')}-0000-4000-8000-000000000000`);
}

/** Loads `rows` (written in slices of `slice`) into a new table and returns its name and counts;
 * `copyFrom` starts the table with the rows of a committed one. */
async function load(
  store: RecordStore,
  schema: TableSchema,
  rows: CellValue[][],
  slice = 1000,
  copyFrom?: string,
) {
  const table = tableOf();
  const writer = await store.createStaging(
    table,
    schema,
    undefined,
    copyFrom !== undefined ? { copyFrom } : {},
  );
  for (let i = 0; i < rows.length; i += slice) await writer.write(rows.slice(i, i + slice));
  return { table, result: await writer.finish() };
}

/** Where the change tests capture: the log, the KEYED schema and the rows the store plans by. */
interface CaptureTarget {
  changesTable: string;
  schema: TableSchema;
  rows: number;
}

/** An upsert of KEYED `rows` on top of `previous`, its changed keys captured under `batch`. */
async function upsertCaptured(
  store: RecordStore,
  target: CaptureTarget,
  batch: number,
  previous: string,
  rows: CellValue[][],
): Promise<{ table: string; changes: number }> {
  const { table } = await load(store, KEYED, rows, 1000, previous);
  const changes = await store.captureChanges({
    ...target,
    batch,
    table,
    previous,
    changed: 'writtenAfterCopy',
    removed: false,
  });
  return { table, changes };
}

/** A delete of KEYED `keys` from `previous`, the keys it removed captured under `batch`. */
async function deleteCaptured(
  store: RecordStore,
  target: CaptureTarget,
  batch: number,
  previous: string,
  keys: CellValue[][],
): Promise<{ table: string; changes: number }> {
  const { table } = await deleteKeys(store, KEYED, keys, previous);
  const changes = await store.captureChanges({
    ...target,
    batch,
    table,
    previous,
    changed: 'none',
    removed: true,
  });
  return { table, changes };
}

/** A replace of `previous` by `table` (both of `schema`) diffed under batch 1 of the dataset's log,
 * and every change it found read back. */
async function replaceDiffed(
  store: RecordStore,
  schema: TableSchema,
  previous: string,
  table: string,
  rows: number,
): Promise<{ changed: number; read: ChangeRow[] }> {
  const changesTable = changesTableName(DATASET);
  const changed = await store.captureChanges({
    changesTable,
    schema,
    rows,
    batch: 1,
    table,
    previous,
    changed: 'all',
    removed: true,
  });
  const read = await store.readChanges({
    changesTable,
    batch: 1,
    keysIn: 'log',
    later: [],
    current: table,
    schema,
    after: null,
    limit: rows * 2 + 1,
  });
  return { changed, read };
}

/** Changes of the KEYED schema as [key, the current record's name, or 'deleted']. */
function shown(rows: ChangeRow[]): (number | string | null)[][] {
  return rows.map((r) => [
    (JSON.parse(r.key) as { id: number }).id,
    r.record === null ? 'deleted' : (JSON.parse(r.record) as { name: string | null }).name,
  ]);
}

/** Writes primary-key values (`writes: 'keysToDelete'`) after a copy of `copyFrom`, in slices of
 * `slice`, and returns the new table's name and counts: a delete by key. */
async function deleteKeys(
  store: RecordStore,
  schema: TableSchema,
  keys: CellValue[][],
  copyFrom: string | undefined,
  slice = 1000,
) {
  const table = tableOf();
  const options = { writes: 'keysToDelete' as const, ...(copyFrom !== undefined ? { copyFrom } : {}) };
  const writer = await store.createStaging(table, schema, undefined, options);
  for (let i = 0; i < keys.length; i += slice) await writer.write(keys.slice(i, i + slice));
  return { table, result: await writer.finish() };
}

/** Every row, read page after page of `size` through `after`. */
async function pageThrough(
  store: RecordStore,
  table: string,
  schema: TableSchema,
  size: number,
  filters: PageQuery['filters'] = [],
): Promise<ReadValue[][]> {
  const out: ReadValue[][] = [];
  let after: KeysetPosition | null = null;
  for (;;) {
    const rows = await store.readPage(table, schema, { filters, after, limit: size });
    assert.ok(rows.length <= size);
    out.push(...rows.map((r) => r.values));
    const last = rows.at(-1);
    if (rows.length < size || last === undefined) return out;
    after = last.position;
  }
}

async function readAllRows(store: RecordStore, table: string, schema: TableSchema): Promise<ReadValue[][]> {
  const out: ReadValue[][] = [];
  for await (const batch of store.readAll(table, schema)) out.push(...batch);
  return out;
}

/** The contract, on the record store `makeStore` gives for a fresh database of `target`. */
function recordStoreSuite(target: DatabaseTarget, makeStore: (database: Database) => RecordStore): void {
  let isolated: IsolatedDatabase;
  let store: RecordStore;
  before(async () => {
    isolated = await target.create();
    store = makeStore(isolated.database);
  });
  after(async () => isolated?.dispose());

  void it('keeps every value exactly: 64-bit integers, booleans, nulls, numbers, awkward text', async () => {
    const awkward = 'tab\there\nnew line\r\\back\\slash\\N "quoted" ;,é🙂';
    const rows: CellValue[][] = [
      [9223372036854775807n, awkward, true, 0.1],
      [-9223372036854775808n, '', false, -1e300],
      [9007199254740993n, null, null, null],
      [2, '\\', true, 1.5],
      [1, '\t', false, 0],
    ];
    const { table, result } = await load(store, KEYED, rows);
    assert.deepEqual(result, {
      rowsWritten: 5,
      rowsLoaded: 5,
      duplicatesCollapsed: 0,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    const read = await readAllRows(store, table, KEYED);
    // Key order; 64-bit integers come back as their decimal text, booleans as booleans.
    assert.deepEqual(read, [
      ['-9223372036854775808', '', false, -1e300],
      ['1', '\t', false, 0],
      ['2', '\\', true, 1.5],
      ['9007199254740993', null, null, null],
      ['9223372036854775807', awkward, true, 0.1],
    ]);
  });

  void it('copies a table under a changed schema: columns cast, renamed, suffixed, values as defaults', async () => {
    const { table: from } = await load(store, KEYED, [
      [2, 'b', false, 2.5],
      [1, 'a', true, null],
      [9007199254740993n, null, null, -1],
    ]);
    const changed: TableSchema = {
      columns: [
        { name: 'id', kind: 'int64' },
        { name: 'id_as_number', kind: 'float64' },
        { name: 'label', kind: 'text' },
        { name: 'big', kind: 'int64' },
        { name: 'flag', kind: 'boolean' },
        { name: 'nothing', kind: 'text' },
      ],
      primaryKey: ['id'],
    };
    const table = tableOf();
    const writer = await store.createStaging(table, changed, undefined, {
      copyFrom: from,
      copyColumns: [
        { from: 'column', column: 'id' },
        { from: 'column', column: 'id' },
        { from: 'columnWithSuffix', column: 'name', suffix: "T00:00'x" },
        { from: 'value', value: -9223372036854775808n },
        { from: 'value', value: true },
        { from: 'value', value: null },
      ],
    });
    const result = await writer.finish();
    assert.equal(result.rowsLoaded, 3);
    assert.equal(result.rowsCopied, 3);
    assert.deepEqual(await readAllRows(store, table, changed), [
      ['1', 1, "aT00:00'x", '-9223372036854775808', true, null],
      ['2', 2, "bT00:00'x", '-9223372036854775808', true, null],
      ['9007199254740993', 9007199254740992, null, '-9223372036854775808', true, null],
    ]);
    assert.equal(await store.countBeyond(from, 'id', 2n ** 53n), 1);
    assert.equal(await store.countBeyond(from, 'id', 1n), 2);
  });

  void it('collapses duplicate keys, the last row of each winning, and counts them', async () => {
    // Over several writes and beyond one write's batch, so chunks and COPY pieces are crossed.
    const rows: CellValue[][] = [];
    for (let i = 0; i < 2600; i++) rows.push([i % 1000, `v${i}`, i % 2 === 0, i]);
    const { table, result } = await load(store, KEYED, rows, 700);
    assert.deepEqual(result, {
      rowsWritten: 2600,
      rowsLoaded: 1000,
      duplicatesCollapsed: 1600,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    const read = await readAllRows(store, table, KEYED);
    assert.equal(read.length, 1000);
    assert.deepEqual(read[0], ['0', 'v2000', true, 2000]);
    assert.deepEqual(read[599], ['599', 'v2599', false, 2599]);
    assert.deepEqual(read[600], ['600', 'v1600', true, 1600]);
  });

  void it('collapses duplicates of a composite key', async () => {
    const schema: TableSchema = {
      columns: [
        { name: 'region', kind: 'text' },
        { name: 'n', kind: 'int64' },
        { name: 'note', kind: 'text' },
      ],
      primaryKey: ['region', 'n'],
    };
    const { table, result } = await load(store, schema, [
      ['b', 1, 'first'],
      ['a', 2, 'x'],
      ['b', 1, 'second'],
      ['a', 1, 'y'],
    ]);
    assert.deepEqual(result, {
      rowsWritten: 4,
      rowsLoaded: 3,
      duplicatesCollapsed: 1,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    assert.deepEqual(await readAllRows(store, table, schema), [
      ['a', '1', 'y'],
      ['a', '2', 'x'],
      ['b', '1', 'second'],
    ]);
  });

  void it('pages in key order after a position, with equality filters of every kind', async () => {
    const rows: CellValue[][] = [];
    // Written out of order; ids beyond 2^53 among them.
    for (let i = 0; i < 50; i++) {
      const id = i % 2 === 0 ? 9007199254740993n + BigInt(i) : 1000 - i;
      rows.push([id, i % 3 === 0 ? 'three' : 'other', i % 2 === 0, i % 5 === 0 ? 0.5 : i]);
    }
    const { table } = await load(store, KEYED, rows);
    const all = await pageThrough(store, table, KEYED, 7);
    assert.equal(all.length, 50);
    const ids = all.map((r) => BigInt(r[0] as string));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    assert.deepEqual(all, await readAllRows(store, table, KEYED));

    const page = await store.readPage(table, KEYED, { filters: [], after: null, limit: 3 });
    assert.deepEqual(
      page.map((r) => r.values[0]),
      ['951', '953', '955'],
    );
    const next = await store.readPage(table, KEYED, { filters: [], after: page[2]!.position, limit: 2 });
    assert.deepEqual(
      next.map((r) => r.values[0]),
      ['957', '959'],
    );

    const byBoolean = await pageThrough(store, table, KEYED, 4, [['ok', true]]);
    assert.equal(byBoolean.length, 25);
    assert.ok(byBoolean.every((r) => r[2] === true));
    const byFalse = await pageThrough(store, table, KEYED, 4, [['ok', false]]);
    assert.equal(byFalse.length, 25);
    const byBig = await store.readPage(table, KEYED, {
      filters: [['id', 9007199254740993n + 48n]],
      after: null,
      limit: 10,
    });
    assert.deepEqual(
      byBig.map((r) => r.values),
      [['9007199254741041', 'three', true, 48]],
    );
    const bySmall = await store.readPage(table, KEYED, { filters: [['id', 999]], after: null, limit: 10 });
    assert.deepEqual(
      bySmall.map((r) => r.values[1]),
      ['other'],
    );
    const combined = await pageThrough(store, table, KEYED, 2, [
      ['name', 'three'],
      ['score', 0.5],
    ]);
    // i divisible by 3 and by 5: 0, 15, 30, 45.
    assert.deepEqual(combined.map((r) => r[0]).sort(), [
      '9007199254740993',
      '9007199254741023',
      '955',
      '985',
    ]);
  });

  void it('orders a table without a primary key by file row, keeping every row', async () => {
    const schema: TableSchema = { columns: KEYED.columns, primaryKey: [] };
    const rows: CellValue[][] = [];
    for (let i = 0; i < 30; i++) rows.push([30 - (i % 10), `r${i}`, i % 2 === 1, i]);
    const { table, result } = await load(store, schema, rows, 8);
    assert.deepEqual(result, {
      rowsWritten: 30,
      rowsLoaded: 30,
      duplicatesCollapsed: 0,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    const expected = rows.map((r) => [String(r[0]), r[1], r[2], r[3]]);
    assert.deepEqual(await pageThrough(store, table, schema, 4), expected);
    assert.deepEqual(await readAllRows(store, table, schema), expected);
    const filtered = await pageThrough(store, table, schema, 2, [['id', 30]]);
    assert.deepEqual(
      filtered.map((r) => r[1]),
      ['r0', 'r10', 'r20'],
    );
  });

  void it('streams a whole table in batches, in order', async () => {
    const count = 12_345;
    const rows: CellValue[][] = [];
    for (let i = count; i >= 1; i--) rows.push([i, `n${i}`, null, i / 4]);
    const { table } = await load(store, KEYED, rows, 2000);
    let seen = 0;
    let batches = 0;
    for await (const batch of store.readAll(table, KEYED)) {
      batches++;
      assert.ok(batch.length > 0);
      for (const row of batch) {
        seen++;
        assert.deepEqual(row, [String(seen), `n${seen}`, null, seen / 4]);
      }
    }
    assert.equal(seen, count);
    assert.ok(batches > 1, 'more than one batch');
  });

  void it('loads rows of the widest schema a dataset may have, more cells than one statement may bind', async () => {
    // 500 properties (MAX_PROPERTIES) × 1,000 rows: 500,000 cells against SQLite's 32,766 parameters.
    const columns = Array.from({ length: MAX_PROPERTIES }, (_, i) => ({
      name: `p${i}`,
      kind: i === 0 ? ('int64' as const) : ('text' as const),
    }));
    const wide: TableSchema = { columns, primaryKey: ['p0'] };
    const rows: CellValue[][] = Array.from({ length: 1000 }, (_, r) =>
      columns.map((_, i) => (i === 0 ? r + 1 : `${r}.${i}`)),
    );
    const { table, result } = await load(store, wide, rows);
    assert.equal(result.rowsLoaded, 1000);
    const read = await readAllRows(store, table, wide);
    assert.equal(read.length, 1000);
    assert.deepEqual(read[999]?.slice(0, 3), ['1000', '999.1', '999.2']);
    assert.equal(read[999]?.[MAX_PROPERTIES - 1], `999.${MAX_PROPERTIES - 1}`);
  });

  void it('reads nothing from an empty table', async () => {
    const { table, result } = await load(store, KEYED, []);
    assert.deepEqual(result, {
      rowsWritten: 0,
      rowsLoaded: 0,
      duplicatesCollapsed: 0,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    assert.deepEqual(await readAllRows(store, table, KEYED), []);
    assert.deepEqual(await store.readPage(table, KEYED, { filters: [], after: null, limit: 5 }), []);
  });

  void it('lists the tables of one dataset and drops them', async () => {
    const mine = [tableOf(), tableOf()];
    const theirs = tableOf(OTHER_DATASET);
    for (const table of [...mine, theirs]) {
      await (await store.createStaging(table, KEYED)).finish();
    }
    const listed = await store.listTables(OTHER_DATASET);
    assert.deepEqual(listed, [theirs]);
    for (const t of mine) assert.ok((await store.listTables(DATASET)).includes(t), t);
    await store.dropTable(theirs);
    assert.deepEqual(await store.listTables(OTHER_DATASET), []);
    await store.dropTable(theirs); // already gone: no error
  });

  void it('abort drops the staging table, before or after finish, and may be called twice', async () => {
    const before = await store.listTables(DATASET);
    const table = tableOf();
    const writer = await store.createStaging(table, KEYED);
    await writer.write([[1, 'a', true, 1]]);
    assert.ok((await store.listTables(DATASET)).includes(table));
    await writer.abort();
    await writer.abort();
    assert.deepEqual(await store.listTables(DATASET), before);

    const finished = await store.createStaging(tableOf(), KEYED);
    await finished.write([[1, 'a', true, 1]]);
    await finished.finish();
    await finished.abort();
    assert.deepEqual(await store.listTables(DATASET), before);
  });

  void it('stops writing when its signal aborts', async () => {
    const table = tableOf();
    const controller = new AbortController();
    const writer = await store.createStaging(table, KEYED, controller.signal);
    await writer.write([[1, 'a', true, 1]]);
    controller.abort(new Error('stop'));
    const many: CellValue[][] = Array.from({ length: 1500 }, (_, i) => [i + 2, 'x', false, i]);
    await assert.rejects(writer.write(many), /stop/);
    await writer.abort();
    assert.ok(!(await store.listTables(DATASET)).includes(table));
  });

  void it('starts a re-run afresh in a table of the same name', async () => {
    const table = tableOf();
    const leftover = await store.createStaging(table, KEYED);
    await leftover.write([[1, 'old', true, 1]]);
    await leftover.finish();
    const rerun = await store.createStaging(table, KEYED);
    await rerun.write([[7, 'new', false, 7]]);
    assert.deepEqual(await rerun.finish(), {
      rowsWritten: 1,
      rowsLoaded: 1,
      duplicatesCollapsed: 0,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    assert.deepEqual(await readAllRows(store, table, KEYED), [['7', 'new', false, 7]]);
  });

  void it('refuses a page position of the wrong type for the order columns (a forged page token)', async () => {
    const { table } = await load(store, KEYED, [[1, 'a', true, 1]]);
    const page = (after: unknown[]) =>
      store.readPage(table, KEYED, { filters: [], after: after as KeysetPosition, limit: 10 });
    for (const after of [['x'], [true], [1.5], ['99999999999999999999'], ['1', '2'], [null]]) {
      await assert.rejects(page(after), InvalidPosition, JSON.stringify(after));
    }
    assert.equal((await page(['0'])).length, 1);
    const byText: TableSchema = { columns: [{ name: 'name', kind: 'text' }], primaryKey: ['name'] };
    const texts = await load(store, byText, [['a'], ['b']]);
    for (const after of [['a\0b'], [1], [false]]) {
      await assert.rejects(
        store.readPage(texts.table, byText, { filters: [], after: after, limit: 10 }),
        InvalidPosition,
      );
    }
    const unkeyed: TableSchema = { columns: [{ name: 'ok', kind: 'boolean' }], primaryKey: [] };
    const rows = await load(store, unkeyed, [[true], [false]]);
    await assert.rejects(
      store.readPage(rows.table, unkeyed, { filters: [], after: ['x'], limit: 10 }),
      InvalidPosition,
    );
    assert.equal(
      (await store.readPage(rows.table, unkeyed, { filters: [], after: [1], limit: 10 })).length,
      1,
    );
  });

  void it('starts a table as a copy of a committed one: written rows replace copied rows of their key', async () => {
    // More rows than one copy chunk, so the copy is crossed in pieces.
    const oldRows: CellValue[][] = [];
    for (let i = 1; i <= 25_000; i++) oldRows.push([i, `old${i}`, i % 2 === 0, i]);
    const base = await load(store, KEYED, oldRows, 5000);
    // Keys 24,991..25,010: ten held (replaced), ten new; key 25,010 twice (the last wins).
    const newRows: CellValue[][] = [];
    for (let i = 24_991; i <= 25_010; i++) newRows.push([i, `new${i}`, true, -i]);
    newRows.push([25_010, 'last', false, 0]);
    const { table, result } = await load(store, KEYED, newRows, 7, base.table);
    assert.deepEqual(result, {
      rowsWritten: 21,
      rowsLoaded: 25_010,
      duplicatesCollapsed: 1,
      rowsCopied: 25_000,
      rowsReplaced: 10,
      rowsDeleted: 0,
    });
    const read = await readAllRows(store, table, KEYED);
    assert.equal(read.length, 25_010);
    assert.deepEqual(read[0], ['1', 'old1', false, 1]);
    assert.deepEqual(read[24_989], ['24990', 'old24990', true, 24_990]);
    assert.deepEqual(read[24_990], ['24991', 'new24991', true, -24_991]);
    assert.deepEqual(read.at(-1), ['25010', 'last', false, 0]);
    // The committed table is untouched.
    assert.equal((await readAllRows(store, base.table, KEYED)).length, 25_000);
  });

  void it('deletes by key: written keys remove the copied rows they name, and none of them stays', async () => {
    const oldRows: CellValue[][] = [];
    for (let i = 1; i <= 25_000; i++) oldRows.push([i, `old${i}`, i % 2 === 0, i]);
    const base = await load(store, KEYED, oldRows, 5000);
    // Keys 24,996..25,005: five held (deleted), five the table never had; 25,000 listed twice.
    const keys: CellValue[][] = [];
    for (let i = 24_996; i <= 25_005; i++) keys.push([i]);
    keys.push([25_000]);
    const { table, result } = await deleteKeys(store, KEYED, keys, base.table, 3);
    assert.deepEqual(result, {
      rowsWritten: 11,
      rowsLoaded: 24_995,
      duplicatesCollapsed: 1,
      rowsCopied: 25_000,
      rowsReplaced: 0,
      rowsDeleted: 5,
    });
    const read = await readAllRows(store, table, KEYED);
    assert.equal(read.length, 24_995);
    assert.deepEqual(read.at(-1), ['24995', 'old24995', false, 24_995]);
    // The key serves pages of what remains, and the committed table is untouched.
    assert.deepEqual(await pageThrough(store, table, KEYED, 10_000), read);
    assert.equal((await readAllRows(store, base.table, KEYED)).length, 25_000);
    // A later load builds on the result as on any table.
    const again = await load(store, KEYED, [[24_996, 'back', true, 0]], 1000, table);
    assert.equal(again.result.rowsLoaded, 24_996);
  });

  void it('deletes by a composite key; keys on a table without a copy or rows delete nothing', async () => {
    const schema: TableSchema = {
      columns: [
        { name: 'region', kind: 'text' },
        { name: 'id', kind: 'int64' },
        { name: 'n', kind: 'float64' },
      ],
      primaryKey: ['region', 'id'],
    };
    const base = await load(store, schema, [
      ['eu', 1, 1],
      ['us', 1, 2],
      ['eu', 2, 3],
      ['eu', 9_007_199_254_740_993n, 4],
    ]);
    // Keys are aligned with the primary key: region, then id.
    const { table, result } = await deleteKeys(
      store,
      schema,
      [
        ['eu', 1],
        ['eu', 9_007_199_254_740_993n],
        ['us', 2],
      ],
      base.table,
    );
    assert.equal(result.rowsDeleted, 2);
    assert.equal(result.rowsLoaded, 2);
    assert.deepEqual(await readAllRows(store, table, schema), [
      ['eu', '2', 3],
      ['us', '1', 2],
    ]);
    const noCopy = await deleteKeys(store, schema, [['eu', 1]], undefined);
    assert.deepEqual(noCopy.result, {
      rowsWritten: 1,
      rowsLoaded: 0,
      duplicatesCollapsed: 0,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    assert.deepEqual(await readAllRows(store, noCopy.table, schema), []);
    const noKeys = await deleteKeys(store, schema, [], base.table);
    assert.equal(noKeys.result.rowsLoaded, 4);
    assert.equal(noKeys.result.rowsDeleted, 0);
    // A table without a primary key cannot be deleted from by key.
    await assert.rejects(
      store.createStaging(tableOf(), { columns: schema.columns, primaryKey: [] }, undefined, {
        writes: 'keysToDelete',
      }),
      /keysToDelete needs a table with a primary key/,
    );
  });

  void it('numbers rows written after a copy after the copied rows (a table without a key)', async () => {
    const schema: TableSchema = { columns: KEYED.columns, primaryKey: [] };
    const first = await load(store, schema, [
      [1, 'a', true, 1],
      [1, 'a', true, 1],
    ]);
    const second = await load(store, schema, [[0, 'b', false, 2]], 1000, first.table);
    assert.deepEqual(second.result, {
      rowsWritten: 1,
      rowsLoaded: 3,
      duplicatesCollapsed: 0,
      rowsCopied: 2,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
    const third = await load(store, schema, [[5, 'c', null, null]], 1000, second.table);
    assert.equal(third.result.rowsLoaded, 4);
    const expected = [
      ['1', 'a', true, 1],
      ['1', 'a', true, 1],
      ['0', 'b', false, 2],
      ['5', 'c', null, null],
    ];
    assert.deepEqual(await pageThrough(store, third.table, schema, 3), expected);
    // A copy of an empty table is an empty start.
    const empty = await load(store, schema, []);
    const onEmpty = await load(store, schema, [[9, 'z', true, 9]], 1000, empty.table);
    assert.deepEqual(onEmpty.result, {
      rowsWritten: 1,
      rowsLoaded: 1,
      duplicatesCollapsed: 0,
      rowsCopied: 0,
      rowsReplaced: 0,
      rowsDeleted: 0,
    });
  });

  void it('finds which rows of a batch have a key the table holds, for every kind of key column', async () => {
    const { table } = await load(store, KEYED, [
      [9223372036854775807n, 'max', true, 1],
      [-5, 'minus', false, 2],
      [7, 'seven', null, 3],
    ]);
    const probe: CellValue[][] = [
      [1, 'x', null, null],
      [9223372036854775807n, 'x', null, null],
      [9223372036854775806n, 'x', null, null],
      [7, 'x', null, null],
      [-5, 'x', null, null],
      [7, 'again', null, null],
    ];
    assert.deepEqual(await store.keysHeld(table, KEYED, probe), [1, 3, 4, 5]);
    assert.deepEqual(await store.keysHeld(table, KEYED, []), []);

    // A composite key of text, boolean and float columns.
    const mixed: TableSchema = {
      columns: [
        { name: 'region', kind: 'text' },
        { name: 'flag', kind: 'boolean' },
        { name: 'x', kind: 'float64' },
        { name: 'note', kind: 'text' },
      ],
      primaryKey: ['region', 'flag', 'x'],
    };
    const awkward = 'it\'s \\ "q" \t é';
    const keyed = await load(store, mixed, [
      [awkward, true, 0.1, 'a'],
      ['b', false, -2.5, 'b'],
    ]);
    const held = await store.keysHeld(keyed.table, mixed, [
      [awkward, true, 0.1, 'other'],
      [awkward, false, 0.1, null],
      ['b', false, -2.5, null],
      ['b', false, 2.5, null],
      ['B', false, -2.5, null],
    ]);
    assert.deepEqual(held, [0, 2]);

    // More rows than one query binds: still every match, in order.
    const many: CellValue[][] = Array.from({ length: 31_000 }, (_, i) => [
      i % 2 === 0 ? 7 : i + 10,
      'x',
      null,
      null,
    ]);
    const found = await store.keysHeld(table, KEYED, many);
    assert.equal(found.length, 15_500);
    assert.ok(found.every((i) => i % 2 === 0));

    // Without a key nothing is held.
    const unkeyed: TableSchema = { columns: KEYED.columns, primaryKey: [] };
    const rows = await load(store, unkeyed, [[1, 'a', true, 1]]);
    assert.deepEqual(await store.keysHeld(rows.table, unkeyed, [[1, 'a', true, 1]]), []);
  });

  void it('captures changed keys in SQL and reads them back joined to the current records', async () => {
    const log = changesTableName(DATASET);
    const before = await load(store, KEYED, [
      [1, 'same', true, 1],
      [2, 'old', true, 2],
      [3, null, null, 3],
      [4, 'gone', false, 4],
      [9007199254740993n, 'big', true, null],
    ]);
    // A replace: 1 and the big key unchanged, 2 changed, 3 from null to a value, 4 gone, 5 new.
    const replaced = await load(store, KEYED, [
      [1, 'same', true, 1],
      [2, 'new', true, 2],
      [3, 'now', null, 3],
      [5, 'added', true, 5],
      [9007199254740993n, 'big', true, null],
    ]);
    const capture = { changesTable: log, schema: KEYED, rows: 5 };
    const diffed = await store.captureChanges({
      ...capture,
      batch: 1,
      table: replaced.table,
      previous: before.table,
      changed: 'all',
      removed: true,
    });
    assert.equal(diffed, 4);
    // An upsert on top: 2 sent again as it is (no change), 6 new.
    const upserted = await upsertCaptured(store, capture, 2, replaced.table, [
      [2, 'new', true, 2],
      [6, 'six', false, 6],
    ]);
    assert.equal(upserted.changes, 1);
    // A delete of 5 and of a key that never was.
    const deleted = await deleteCaptured(store, capture, 3, upserted.table, [[5], [77]]);
    assert.equal(deleted.changes, 1);

    const read = (batch: number, later: number[], after: KeysetPosition | null = null, limit = 100) =>
      store.readChanges({
        changesTable: log,
        batch,
        keysIn: 'log',
        later,
        current: deleted.table,
        schema: KEYED,
        after,
        limit,
      });
    // Batch 1 without later batches: each of its keys, as the current table holds it now.
    assert.deepEqual(shown(await read(1, [])), [
      [2, 'new'],
      [3, 'now'],
      [4, 'deleted'],
      [5, 'deleted'],
    ]);
    // 5 changed again in batch 3: it is listed there, not in batch 1.
    assert.deepEqual(shown(await read(1, [2, 3])), [
      [2, 'new'],
      [3, 'now'],
      [4, 'deleted'],
    ]);
    // Paged by key position.
    const first = await read(1, [2, 3], null, 2);
    assert.deepEqual(shown(first), [
      [2, 'new'],
      [3, 'now'],
    ]);
    assert.deepEqual(shown(await read(1, [2, 3], first.at(-1)?.position ?? null, 2)), [[4, 'deleted']]);
    // Records and keys as a JSON line of an export writes them, every kind; positions as pages hold them.
    const [six] = await read(2, [3]);
    assert.equal(six?.record, '{"id":6,"name":"six","ok":false,"score":6}');
    assert.equal(six?.key, '{"id":6}');
    assert.deepEqual(six?.position, ['6']);
    assert.deepEqual((await read(1, [2, 3]))[0]?.record, '{"id":2,"name":"new","ok":true,"score":2}');
    assert.deepEqual(shown(await read(3, [])), [[5, 'deleted']]);

    await store.discardChanges(log, [1, 2, 3]);
    assert.deepEqual(await read(1, []), []);
    await store.dropTable(log);
  });

  void it("reads a first load's batch from the records table: every key no later batch changed", async () => {
    const log = changesTableName(DATASET);
    const first = await load(store, KEYED, [
      [3, 'three', true, 3],
      [1, 'one', true, 1],
      [5, 'five', false, 5],
      [2, 'two', null, 2],
      [4, 'four', true, 4],
    ]);
    const capture = { changesTable: log, schema: KEYED, rows: 6 };
    // The first load's capture writes no key; it makes the log.
    assert.equal(
      await store.captureChanges({
        ...capture,
        batch: 1,
        table: first.table,
        previous: null,
        changed: 'none',
        removed: false,
      }),
      0,
    );
    // Then an upsert (2 edited, 6 new) and a delete of 5.
    const upserted = await upsertCaptured(store, capture, 2, first.table, [
      [2, 'TWO', null, 2],
      [6, 'six', true, 6],
    ]);
    const deleted = await deleteCaptured(store, capture, 3, upserted.table, [[5]]);

    const read = (later: number[], after: KeysetPosition | null = null, limit = 100) =>
      store.readChanges({
        changesTable: log,
        batch: 1,
        keysIn: 'records',
        later,
        current: deleted.table,
        schema: KEYED,
        after,
        limit,
      });
    // 2 and 6 are batch 2's, 5 batch 3's: the first load's batch keeps 1, 3 and 4, in key order.
    assert.deepEqual(shown(await read([2, 3])), [
      [1, 'one'],
      [3, 'three'],
      [4, 'four'],
    ]);
    const page = await read([2, 3], null, 2);
    assert.deepEqual(shown(page), [
      [1, 'one'],
      [3, 'three'],
    ]);
    assert.deepEqual(shown(await read([2, 3], page.at(-1)?.position ?? null, 2)), [[4, 'four']]);
    // Read as the last batch (no later one): every record of the table.
    assert.deepEqual(
      shown(await read([])).map(([id]) => id),
      [1, 2, 3, 4, 6],
    );
    assert.equal((await read([]))[0]?.record, '{"id":1,"name":"one","ok":true,"score":1}');
    await store.dropTable(log);
  });

  void it('diffs a replace whose rows stayed in place or moved: only changed and new keys are changes', async () => {
    const log = changesTableName(DATASET);
    const before = await load(store, KEYED, [
      [1, 'one', true, 1],
      [2, 'two', null, 2],
      [3, 'three', false, 3],
      [4, null, true, 4],
      [5, 'five', true, 5],
    ]);
    // 1 and 2 swapped (moved, unchanged), 3 edited in place, 4 in place with its null, 5 moved and
    // edited, 6 new.
    const replaced = await load(store, KEYED, [
      [2, 'two', null, 2],
      [1, 'one', true, 1],
      [3, 'THREE', false, 3],
      [4, null, true, 4],
      [6, 'six', true, 6],
      [5, 'FIVE', true, 5],
    ]);
    const { changed, read: rows } = await replaceDiffed(store, KEYED, before.table, replaced.table, 6);
    assert.deepEqual(
      rows.map((r) => r.key),
      ['{"id":3}', '{"id":5}', '{"id":6}'],
    );
    assert.equal(changed, 3);
    await store.dropTable(log);
  });

  void it('diffs a replace keyed by a column of every kind: each changed, new and removed key found once', async () => {
    const log = changesTableName(DATASET);
    const everyKind: TableSchema = {
      columns: EVERY_KIND,
      primaryKey: ['region', 'flag', 'x', 'n'],
    };
    // 400 keys (PostgreSQL splits the join by the keys' hash: both parts get some), 0 and -0 alike.
    const keyOf = (i: number): CellValue[] => [
      `r${i % 7}`,
      i % 2 === 0,
      i % 5 === 0 ? -0 : i / 4,
      BigInt(i) << 40n,
    ];
    const before: CellValue[][] = [];
    const after: CellValue[][] = [];
    const expected = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const old = [...keyOf(i), `note ${i}`];
      if (i % 37 !== 0) before.push(old);
      if (i % 11 === 0) {
        // Removed, unless it was never there.
        if (i % 37 !== 0) expected.add(JSON.stringify(keyOf(i).map(String)));
        continue;
      }
      const edited = i % 13 === 0;
      after.push(edited ? [...keyOf(i), null] : old);
      if (edited || i % 37 === 0) expected.add(JSON.stringify(keyOf(i).map(String)));
    }
    const previous = await load(store, everyKind, before);
    const replaced = await load(store, everyKind, after.reverse());
    const { changed, read: rows } = await replaceDiffed(
      store,
      everyKind,
      previous.table,
      replaced.table,
      after.length,
    );
    const found = rows.map((r) => {
      const key = JSON.parse(r.key) as Record<string, unknown>;
      return JSON.stringify([key.region, key.flag, key.x, key.n].map(String));
    });
    assert.equal(changed, expected.size);
    assert.equal(new Set(found).size, found.length);
    assert.deepEqual(new Set(found), expected);
    await store.dropTable(log);
  });

  void it('reads changes of a key of every kind page by page, records and keys as JSON.stringify writes them', async () => {
    const log = changesTableName(DATASET);
    const mixed: TableSchema = {
      columns: EVERY_KIND,
      primaryKey: ['region', 'flag', 'x'],
    };
    const awkward = 'tab\there\nnew line\r\\back\\slash\\N \\\' it\'s "quoted" \u0001 ;,é🙂';
    const rows: CellValue[][] = [
      [awkward, true, 0.1, 9223372036854775807n, awkward],
      ['b', false, -2.5, -9223372036854775808n, null],
      ['b', true, 1e-7, 9007199254740993n, ''],
      ['b', true, 1.5e300, null, '\\N'],
      ['', false, 0, 0, '\t'],
    ];
    const created = await load(store, mixed, rows);
    const batch = { changesTable: log, schema: mixed, rows: rows.length, batch: 1 };
    assert.equal(
      await store.captureChanges({
        ...batch,
        table: created.table,
        previous: null,
        changed: 'all',
        removed: false,
      }),
      5,
    );
    // One change a page, each next position passed through JSON as a cursor carries it.
    const readAll = async (keysIn: 'log' | 'records') => {
      const read: { key: unknown; record: unknown }[] = [];
      let after: KeysetPosition | null = null;
      for (;;) {
        const page = await store.readChanges({
          changesTable: log,
          batch: 1,
          keysIn,
          later: [],
          current: created.table,
          schema: mixed,
          after,
          limit: 1,
        });
        if (page.length === 0) return read;
        const [row] = page;
        assert.ok(row !== undefined && row.record !== null);
        read.push({ key: row.key, record: row.record });
        after = JSON.parse(JSON.stringify(row.position)) as KeysetPosition;
      }
    };
    const read = await readAll('log');
    // A first load's batch, read from the records table, pages the same keys the same way.
    assert.deepEqual(await readAll('records'), read);
    // As JSON.stringify writes the same records (int64 digit for digit), in key order.
    const json = (v: CellValue) => (typeof v === 'bigint' ? v.toString() : JSON.stringify(v));
    const object = (names: string[], values: CellValue[]) =>
      `{${names.map((name, i) => `${JSON.stringify(name)}:${json(values[i] ?? null)}`).join(',')}}`;
    const names = mixed.columns.map((c) => c.name);
    const inKeyOrder = [rows[4], rows[1], rows[2], rows[3], rows[0]] as CellValue[][];
    assert.deepEqual(
      read,
      inKeyOrder.map((r) => ({ key: object(names.slice(0, 3), r.slice(0, 3)), record: object(names, r) })),
    );
    await store.discardChanges(log, [1]);
    await store.dropTable(log);
  });
}

await forEachDatabase('record store', (target) => recordStoreSuite(target, createRecordStore));
// SQLite builds a large table's key on a thread of its own (sqlite-key.ts): the whole contract again
// with every table's key built there.
await onDatabase('sqlite', 'record store, keys built on a thread', (target) =>
  recordStoreSuite(target, (database) => {
    if (database.engine.kind !== 'sqlite') throw new Error('an SQLite database was expected');
    return new SqliteRecordStore(database.engine.file, database.db, { keyThreadRows: 0 });
  }),
);

await onDatabase('sqlite', 'record store, a key thread that fails', (target) => {
  let isolated: IsolatedDatabase;
  let store: SqliteRecordStore;
  before(async () => {
    isolated = await target.create();
    if (isolated.database.engine.kind !== 'sqlite') throw new Error('an SQLite database was expected');
    store = new SqliteRecordStore(isolated.database.engine.file, isolated.database.db, { keyThreadRows: 0 });
  });
  after(async () => isolated?.dispose());

  void it("fails the finish with the thread's error, and abort still drops what is left", async () => {
    const table = tableOf();
    const writer = await store.createStaging(table, KEYED);
    await writer.write([[1, 'a', true, 1]]);
    // Gone before its key is built: the thread meets no such table.
    await store.dropTable(table);
    await assert.rejects(writer.finish(), /no such table/);
    await writer.abort();
    assert.deepEqual(await store.listTables(DATASET), []);
  });

  void it("probes an upsert's rows on the thread, the event loop turning meanwhile", async () => {
    const rows = (name: string) => Array.from({ length: 2000 }, (_, i): CellValue[] => [i, name, true, i]);
    const before = await load(store, KEYED, rows('a'));
    const upserted = await load(store, KEYED, rows('b'), 1000, before.table);
    // The turns while the capture runs: a statement on this thread's connection would run in one
    // turn, whatever its length.
    const turns = countEventLoopTurns();
    const changed = await store.captureChanges({
      changesTable: changesTableName(DATASET),
      batch: 1,
      schema: KEYED,
      table: upserted.table,
      previous: before.table,
      changed: 'writtenAfterCopy',
      removed: false,
      rows: 2000,
    });
    const counted = turns.stop();
    assert.equal(changed, 2000);
    assert.ok(counted > 100, `${counted} turns of the event loop`);
  });
});
