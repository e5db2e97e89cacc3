// The records of the load and reads parts: N rows × 8 columns (integers, strings, a number, a
// boolean, a date), written as CSV and as the same rows in newline-delimited JSON.
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

function csvLine(i: number): string {
  const born = `19${50 + (i % 50)}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`;
  return `${i},Person ${i},person${i}@example.org,${18 + (i % 80)},${(i % 1000) / 7},${i % 3 === 0},"${CITIES[i % 6]}",${born}\n`;
}

function ndjsonLine(i: number): string {
  const born = `19${50 + (i % 50)}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`;
  return `{"id":${i},"name":"Person ${i}","email":"person${i}@example.org","age":${18 + (i % 80)},"score":${(i % 1000) / 7},"active":${i % 3 === 0},"city":"${CITIES[i % 6]}","born":"${born}"}\n`;
}

/** Writes `rows` records to `file` in `format`. */
export async function generate(file: string, rows: number, format: FileFormat): Promise<void> {
  const out = createWriteStream(file);
  const line = format === 'csv' ? csvLine : ndjsonLine;
  let chunk = format === 'csv' ? `${PROPERTIES.map((p) => p[0]).join(',')}\n` : '';
  for (let i = 1; i <= rows; i++) {
    chunk += line(i);
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

/** The CSV and NDJSON files of `rows` records in the run's scratch folder, written once per run. */
export async function recordFiles(ctx: BenchContext, rows: number): Promise<Record<FileFormat, string>> {
  const files = {
    csv: join(ctx.tmp, `records-${rows}.csv`),
    ndjson: join(ctx.tmp, `records-${rows}.ndjson`),
  };
  for (const format of ['csv', 'ndjson'] as const) {
    if (existsSync(files[format])) continue; // the other part of this run wrote it
    // Renamed when complete, so a failed write is never taken for the whole file.
    await generate(`${files[format]}.part`, rows, format);
    renameSync(`${files[format]}.part`, files[format]);
    ctx.log(`  ${rows} rows as ${format}: ${(statSync(files[format]).size / 1e6).toFixed(0)} MB`);
  }
  return files;
}
