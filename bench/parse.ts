// Benchmark of the parse-and-validate stage (not a test): generates 1M x 8 CSV, NDJSON and JSON
// array files in a temp dir, then prints rows/s and peak RSS of parseRecords for each.
// Usage: npm run build && node dist/bench/parse.js [rows] [csv|ndjson|json ...]
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import type { DatasetSchema } from '../src/domain/datasets/schema.js';
import { ErrorCollector, parseRecords, type InputFormat } from '../src/domain/loading/index.js';

const schema: DatasetSchema = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string', required: false },
    { name: 'email', type: 'string', required: false },
    { name: 'age', type: 'integer', required: false },
    { name: 'score', type: 'number', required: false },
    { name: 'active', type: 'boolean', required: false },
    { name: 'born', type: 'date', required: false },
    { name: 'updated', type: 'datetime', required: false },
  ],
  primaryKey: ['id'],
};

type Kind = 'csv' | 'ndjson' | 'json';

function record(i: number): [string[], Record<string, unknown>] {
  const born = `19${50 + (i % 50)}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`;
  const updated = `2024-08-21T23:16:${String(i % 60).padStart(2, '0')}.230069Z`;
  // Every tenth name needs quoting, as real exports have some.
  const name = i % 10 === 0 ? `Smith, John "J" ${i}` : `user${i}`;
  const values = [
    i,
    name,
    `user${i}@example.com`,
    i % 100,
    Number((i * 1.37).toFixed(2)),
    i % 2 === 1,
    born,
    updated,
  ];
  const csv = values.map((v) =>
    typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v),
  );
  return [csv, Object.fromEntries(schema.properties.map((p, k) => [p.name, values[k]]))];
}

async function generate(path: string, kind: Kind, rows: number): Promise<void> {
  const out = createWriteStream(path);
  let buf =
    kind === 'csv' ? `${schema.properties.map((p) => p.name).join(',')}\n` : kind === 'json' ? '[\n' : '';
  for (let i = 1; i <= rows; i++) {
    const [csv, obj] = record(i);
    if (kind === 'csv') buf += `${csv.join(',')}\n`;
    else buf += `${JSON.stringify(obj)}${kind === 'json' && i < rows ? ',' : ''}\n`;
    if (buf.length > 1 << 20 && !out.write(buf)) await once(out, 'drain');
    if (buf.length > 1 << 20) buf = '';
  }
  out.end(kind === 'json' ? `${buf}]\n` : buf);
  await once(out, 'finish');
}

async function measure(path: string, format: InputFormat): Promise<void> {
  let peak = process.memoryUsage().rss;
  const errors = new ErrorCollector();
  const stats = { rowsRead: 0 };
  const cpu = process.cpuUsage();
  const start = performance.now();
  let valid = 0;
  for await (const batch of parseRecords(createReadStream(path), { schema, format, errors, stats })) {
    valid += batch.rows.length;
    peak = Math.max(peak, process.memoryUsage.rss());
  }
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  console.log(
    `${format.padEnd(5)} ${path.split('/').pop()}: ${stats.rowsRead} rows (${valid} valid, ${errors.count} errors) ` +
      `in ${seconds.toFixed(2)} s wall, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU: ` +
      `${Math.round(stats.rowsRead / seconds).toLocaleString('en')} rows/s, peak RSS ${Math.round(peak / 2 ** 20)} MiB`,
  );
}

const rows = Number(process.argv[2] ?? 1_000_000);
const kinds = (process.argv.length > 3 ? process.argv.slice(3) : ['csv', 'ndjson', 'json']) as Kind[];
const dir = await mkdtemp(join(tmpdir(), 'dx-bench-parse-'));
try {
  for (const kind of kinds) {
    const path = join(dir, `data.${kind}`);
    await generate(path, kind, rows);
    await measure(path, kind === 'csv' ? 'csv' : 'auto');
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
