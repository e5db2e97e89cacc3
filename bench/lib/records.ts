// The records of the load, reads, exports and jobs parts: N rows × 8 columns (integers, strings, a
// number, a boolean, a date), written as CSV and as the same rows in newline-delimited JSON, with
// the keys 1..N in ascending order or in a fixed-seed random order (files as they really come:
// voter lists, exports of other systems). A record's content depends on its key alone, so both
// orders hold the same records and every run of the suite writes the same files.
import { once } from 'node:events';
import { createWriteStream, existsSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext } from './part.js';

/** Records per measured load and read: BENCH_LOAD_ROWS, default one million (~90 MB of CSV). */
export const LOAD_ROWS = Number(process.env.BENCH_LOAD_ROWS ?? 1_000_000);

/** Name, dataset type, `sqlite3` baseline column, `psql` baseline column. */
export const PROPERTIES = [
  ['id', 'integer', 'integer primary key', 'bigint primary key'],
  ['name', 'string', 'text', 'text'],
  ['email', 'string', 'text', 'text'],
  ['age', 'integer', 'integer', 'bigint'],
  ['score', 'number', 'real', 'double precision'],
  ['active', 'boolean', 'integer', 'boolean'],
  ['city', 'string', 'text', 'text'],
  ['born', 'date', 'text', 'text'],
] as const;

/** The dataset schema of these records (POST /api/v1/datasets). */
export const DATASET_SCHEMA = {
  properties: PROPERTIES.map(([name, type]) => ({ name, type })),
  primaryKey: ['id'],
};

// One city has a comma, so the CSV has quoted fields to parse.
const CITIES = ['Berlin', 'Lagos', 'Lima', 'Osaka', 'Quebec, QC', 'Tunis'];

export type FileFormat = 'csv' | 'ndjson';

/** The order of the keys in a file. */
export type KeyOrder = 'random' | 'ascending';
export const KEY_ORDERS: readonly KeyOrder[] = ['random', 'ascending'];
export const KEY_ORDER_NAMES: Record<KeyOrder, string> = {
  random: 'random keys',
  ascending: 'ascending keys',
};

/** The seed of the random order: fixed, so every run (and every machine) loads the same file. */
const SHUFFLE_SEED = 38;

/** mulberry32: a small, well-mixed 32-bit generator; enough for a reproducible shuffle. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** The keys 1..rows in `order` (Fisher–Yates with a fixed seed for `random`). */
export function keysInOrder(rows: number, order: KeyOrder): Uint32Array {
  const keys = new Uint32Array(rows);
  for (let i = 0; i < rows; i++) keys[i] = i + 1;
  if (order === 'ascending') return keys;
  const next = generator(SHUFFLE_SEED);
  for (let i = rows - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const t = keys[i] as number;
    keys[i] = keys[j] as number;
    keys[j] = t;
  }
  return keys;
}

/** A record's name: `variant` 0 is the record as first loaded, others are edits of it (the
 * changes part's replaces and upserts). */
const nameOf = (i: number, variant: number) => (variant === 0 ? `Person ${i}` : `Person ${i} v${variant}`);

function csvLine(i: number, variant = 0): string {
  const born = `19${50 + (i % 50)}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`;
  return `${i},${nameOf(i, variant)},person${i}@example.org,${18 + (i % 80)},${(i % 1000) / 7},${i % 3 === 0},"${CITIES[i % 6]}",${born}\n`;
}

function ndjsonLine(i: number, variant = 0): string {
  const born = `19${50 + (i % 50)}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`;
  return `{"id":${i},"name":"${nameOf(i, variant)}","email":"person${i}@example.org","age":${18 + (i % 80)},"score":${(i % 1000) / 7},"active":${i % 3 === 0},"city":"${CITIES[i % 6]}","born":"${born}"}\n`;
}

/** Which records a file holds, and which edit of each. */
export interface FileContent {
  /** The keys, in file order (default: 1..rows in `order`). */
  keys?: ArrayLike<number>;
  /** The edit of each key's record (default: 0, the record as first loaded). */
  variantOf?: (key: number) => number;
}

/** Writes the records of keys 1..`rows` to `file` in `format`, the keys in `order` (or the keys and
 * edits of `content`). */
export async function generate(
  file: string,
  rows: number,
  format: FileFormat,
  order: KeyOrder,
  content: FileContent = {},
): Promise<void> {
  const out = createWriteStream(file);
  const line = format === 'csv' ? csvLine : ndjsonLine;
  const keys = content.keys ?? keysInOrder(rows, order);
  const variantOf = content.variantOf ?? (() => 0);
  let chunk = format === 'csv' ? `${PROPERTIES.map((p) => p[0]).join(',')}\n` : '';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as number;
    chunk += line(key, variantOf(key));
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

/** The CSV and NDJSON files of `rows` records (keys in `order`) in the run's scratch folder,
 * written once per run. */
export async function recordFiles(
  ctx: BenchContext,
  rows: number,
  order: KeyOrder,
): Promise<Record<FileFormat, string>> {
  const files = {
    csv: join(ctx.tmp, `records-${rows}-${order}.csv`),
    ndjson: join(ctx.tmp, `records-${rows}-${order}.ndjson`),
  };
  for (const format of ['csv', 'ndjson'] as const) {
    if (existsSync(files[format])) continue; // another part of this run wrote it
    // Renamed when complete, so a failed write is never taken for the whole file.
    await generate(`${files[format]}.part`, rows, format, order);
    renameSync(`${files[format]}.part`, files[format]);
    ctx.log(
      `  ${rows} rows (${KEY_ORDER_NAMES[order]}) as ${format}: ${(statSync(files[format]).size / 1e6).toFixed(0)} MB`,
    );
  }
  return files;
}
