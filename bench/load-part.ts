// The `load` part: N rows × 8 columns loaded end to end (uploadUrl → PUT → job Completed) into
// `dx serve` in its own process, as CSV and as NDJSON, interleaved run by run with `sqlite3
// .import` and `psql \copy` into equivalent tables; then one large CSV per engine for the
// service's peak RSS.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  createDataset,
  ENGINE_NAMES,
  ENGINES,
  loadFile,
  PG_URL,
  startDx,
  type Dx,
  type Engine,
} from './lib/dx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { peakRssWhile, rssMb } from './lib/procfs.js';
import { generate, LOAD_ROWS, PROPERTIES, recordFiles } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { run } from './lib/spawn.js';
import { cell, median, ratio } from './lib/stats.js';

/** Rows of the memory load: BENCH_LOAD_BIG_ROWS, default ten million (~950 MB); 0 skips it. */
const BIG_ROWS = Number(process.env.BENCH_LOAD_BIG_ROWS ?? 10_000_000);
/** Targets: our load time ÷ the baseline's. */
const TARGET_RATIO: Record<Engine, number> = { sqlite: 2, postgres: 1.5 };
const BASELINE_NAME: Record<Engine, string> = { sqlite: 'sqlite3 .import', postgres: 'psql \\copy' };
/** The memory target: the service's peak RSS while loading ten million rows, in MB (10^6 bytes). */
const RSS_TARGET_MB = 300;

export const loadPart: BenchPart = {
  describe: `record loads end to end vs sqlite3 .import and psql \\copy (${LOAD_ROWS} rows × 8 columns); service RSS at ${BIG_ROWS} rows`,
  run: runLoadBench,
};

interface Measured {
  seconds: number;
  uploadSeconds: number;
  peakRssMb: number;
}

/** One engine's runs. */
interface EngineRuns {
  engine: Engine;
  baseline: number[];
  csv: Measured[];
  ndjson: Measured[];
}

async function runLoadBench(ctx: BenchContext): Promise<Section[]> {
  ctx.log(`load: ${LOAD_ROWS} rows, ${ctx.runs} runs per engine`);
  const files = await recordFiles(ctx, LOAD_ROWS);
  const results: EngineRuns[] = [];
  for (const engine of ENGINES) {
    const dx = await startDx(ctx, engine);
    try {
      const r: EngineRuns = { engine, baseline: [], csv: [], ndjson: [] };
      // One dataset per engine, replaced by every load of ours.
      const datasetId = await createDataset(dx, 'load');
      for (let i = 1; i <= ctx.runs; i++) {
        r.baseline.push(await baseline(ctx, dx, files.csv));
        for (const format of ['csv', 'ndjson'] as const) {
          const [times, peakRssMb] = await peakRssWhile(dx.pid, () =>
            loadFile(dx, datasetId, files[format], format, LOAD_ROWS),
          );
          r[format].push({ ...times, peakRssMb });
        }
        ctx.log(
          `  ${engine} run ${i}: baseline ${r.baseline.at(-1)?.toFixed(2)} s, csv ${r.csv.at(-1)?.seconds.toFixed(2)} s, ` +
            `ndjson ${r.ndjson.at(-1)?.seconds.toFixed(2)} s`,
        );
      }
      results.push(r);
    } finally {
      await dx.close();
    }
  }
  return [loadSection(ctx, results), bigSection(await bigLoads(ctx))];
}

/** `sqlite3 .import` into a fresh file, or `psql \copy` into a fresh table of the service's schema. */
async function baseline(ctx: BenchContext, dx: Dx, csv: string): Promise<number> {
  if (dx.engine === 'sqlite') {
    const db = join(ctx.tmp, 'baseline.sqlite');
    const cols = PROPERTIES.map((p) => `${p[0]} ${p[2]}`).join(', ');
    try {
      await run('sqlite3', [db, `create table t (${cols});`]);
      return await timed(() =>
        run('sqlite3', [
          db,
          '-cmd',
          'pragma journal_mode=wal',
          '-cmd',
          '.mode csv',
          `.import --skip 1 ${csv} t`,
        ]),
      );
    } finally {
      for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    }
  }
  // In the service's schema, which close() drops with everything in it.
  const t = `"${dx.schema}".bench_baseline`;
  const cols = PROPERTIES.map((p) => `${p[0]} ${p[3]}`).join(', ');
  await run('psql', [PG_URL, '-qc', `drop table if exists ${t}; create table ${t} (${cols})`]);
  return timed(() => run('psql', [PG_URL, '-qc', `\\copy ${t} from '${csv}' csv header`]));
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return (performance.now() - started) / 1000;
}

function loadSection(ctx: BenchContext, results: readonly EngineRuns[]): Section {
  const rows: string[][] = [];
  const checks: string[][] = [];
  for (const r of results) {
    const name = ENGINE_NAMES[r.engine];
    const base = median(r.baseline);
    rows.push([
      name,
      `${BASELINE_NAME[r.engine]} (baseline)`,
      cell(base, 2),
      cell(LOAD_ROWS / base),
      '1.00×',
      '–',
      '–',
    ]);
    for (const format of ['csv', 'ndjson'] as const) {
      const seconds = median(r[format].map((m) => m.seconds));
      const upload = median(r[format].map((m) => m.uploadSeconds));
      const peak = Math.max(...r[format].map((m) => m.peakRssMb));
      rows.push([
        name,
        `ours, ${format.toUpperCase()}`,
        cell(seconds, 2),
        cell(LOAD_ROWS / seconds),
        ratio(seconds, base),
        cell(upload, 2),
        cell(peak),
      ]);
      const target = TARGET_RATIO[r.engine];
      checks.push([
        `${name}, ${format.toUpperCase()}: ours ≤ ${target}× ${BASELINE_NAME[r.engine]}`,
        ratio(seconds, base),
        seconds / base <= target ? 'yes' : '**no**',
      ]);
    }
  }
  return {
    title: `Record loads, ${LOAD_ROWS.toLocaleString('en')} rows × 8 columns`,
    blocks: [
      '`dx serve --role api,worker` in its own process on a fresh SQLite file or PostgreSQL schema. ' +
        '"Ours": POST uploadUrl (mode=replace, one dataset per engine), PUT the file, poll the job every ' +
        '50 ms; timed from the uploadUrl call to Completed, which must report every row loaded. ' +
        'The baselines load the same CSV into an equivalent table with the same primary key: `sqlite3 ' +
        '.import` into a fresh WAL-mode file, `psql \\copy` into a fresh table. The NDJSON file holds the ' +
        `same rows (its ratio is still to the CSV baseline). Runs interleaved (baseline, CSV, NDJSON), ` +
        `median of ${ctx.runs}; peak RSS: the service process's alone, the highest of the runs (VmHWM ` +
        'reset before each load, and VmRSS sampled every 50 ms). "Of which upload": until the PUT was ' +
        'answered (the file stored); the rest is the job: queueing, parsing, writing, committing.',
      table(
        ['engine', 'load', 'seconds', 'rows/s', '÷ baseline', 'of which upload s', 'service peak RSS MiB'],
        rows,
      ),
      '**Targets**',
      table(['target', 'measured', 'holds'], checks),
    ],
  };
}

interface BigLoad {
  engine: Engine;
  seconds: number;
  rssBeforeMb: number;
  peakRssMb: number;
}

/** One load of BIG_ROWS rows (CSV) per engine, each into a freshly started service. */
async function bigLoads(ctx: BenchContext): Promise<BigLoad[]> {
  if (BIG_ROWS <= 0) return [];
  const file = join(ctx.tmp, `records-${BIG_ROWS}.csv`);
  const out: BigLoad[] = [];
  try {
    ctx.log(`load: ${BIG_ROWS} rows for the memory check`);
    await generate(file, BIG_ROWS, 'csv');
    for (const engine of ENGINES) {
      const dx = await startDx(ctx, engine);
      try {
        const datasetId = await createDataset(dx, 'big');
        const rssBeforeMb = rssMb(dx.pid);
        const [{ seconds }, peakRssMb] = await peakRssWhile(dx.pid, () =>
          loadFile(dx, datasetId, file, 'csv', BIG_ROWS),
        );
        out.push({ engine, seconds, rssBeforeMb, peakRssMb });
        ctx.log(`  ${engine}: ${seconds.toFixed(1)} s, peak RSS ${peakRssMb.toFixed(0)} MiB`);
      } finally {
        await dx.close();
      }
    }
  } finally {
    rmSync(file, { force: true });
  }
  return out;
}

function bigSection(loads: readonly BigLoad[]): Section {
  if (BIG_ROWS <= 0) {
    return { title: 'Memory while loading a large file', blocks: ['Skipped: BENCH_LOAD_BIG_ROWS=0.'] };
  }
  const title = `Memory while loading ${BIG_ROWS.toLocaleString('en')} rows`;
  const limitMiB = (RSS_TARGET_MB * 1e6) / 2 ** 20;
  return {
    title,
    blocks: [
      `One CSV load of ${BIG_ROWS.toLocaleString('en')} rows per engine, ours only, into a freshly started ` +
        'service (one run). RSS before: the idle service after start; peak: its highest while loading ' +
        '(VmHWM reset at the start, VmRSS sampled every 50 ms).' +
        (BIG_ROWS === 10_000_000
          ? ''
          : ' The target is stated for 10,000,000 rows; this run loaded another count.'),
      table(
        ['engine', 'seconds', 'rows/s', 'RSS before MiB', 'peak RSS MiB'],
        loads.map((l) => [
          ENGINE_NAMES[l.engine],
          cell(l.seconds, 1),
          cell(BIG_ROWS / l.seconds),
          cell(l.rssBeforeMb),
          cell(l.peakRssMb),
        ]),
      ),
      '**Targets**',
      table(
        ['target', 'measured', 'holds'],
        loads.map((l) => [
          `${ENGINE_NAMES[l.engine]}: peak RSS of the service < ${RSS_TARGET_MB} MB while loading ${BIG_ROWS.toLocaleString('en')} rows`,
          `${cell(l.peakRssMb)} MiB = ${cell((l.peakRssMb * 2 ** 20) / 1e6)} MB`,
          l.peakRssMb < limitMiB ? 'yes' : '**no**',
        ]),
      ),
    ],
  };
}
