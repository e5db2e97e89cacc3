// The `load` part: N rows × 8 columns loaded end to end (uploadUrl → PUT → job Completed) into
// `dx serve` in its own process, as CSV and as NDJSON, with the keys in a fixed-seed random order
// (files as they come) and in ascending order, interleaved run by run with `sqlite3 .import` and
// `psql \copy` of the same file into a table with the same primary key; wall time beside the CPU
// of the service, of the tool and of PostgreSQL's backends. Then one large random-order CSV per
// engine for the service's peak RSS.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { cpuWhile, type CpuSpent } from './lib/cpu.js';
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
import { endedChildrenCpuMs, peakRssWhile, rssMb } from './lib/procfs.js';
import {
  generate,
  KEY_ORDER_NAMES,
  KEY_ORDERS,
  LOAD_ROWS,
  PROPERTIES,
  recordFiles,
  type FileFormat,
  type KeyOrder,
} from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { run } from './lib/spawn.js';
import { cell, median, ratio } from './lib/stats.js';

/** Rows of the memory load: BENCH_LOAD_BIG_ROWS, default ten million (~950 MB); 0 skips it. */
const BIG_ROWS = Number(process.env.BENCH_LOAD_BIG_ROWS ?? 10_000_000);
/** Targets: our load time ÷ the baseline's, by format, on either engine and key order. */
const TARGET_RATIO: Record<FileFormat, number> = { csv: 1.3, ndjson: 1.5 };
const BASELINE_NAME: Record<Engine, string> = { sqlite: 'sqlite3 .import', postgres: 'psql \\copy' };
/** The memory target: the service's peak RSS while loading, in MB (10^6 bytes), at 1M and 10M rows. */
const RSS_TARGET_MB = 300;
const RSS_LIMIT_MIB = (RSS_TARGET_MB * 1e6) / 2 ** 20;
const FORMATS: readonly FileFormat[] = ['csv', 'ndjson'];

export const loadPart: BenchPart = {
  describe: `record loads end to end vs sqlite3 .import and psql \\copy (${LOAD_ROWS} rows × 8 columns, random and ascending keys); service RSS at ${BIG_ROWS} rows`,
  run: runLoadBench,
};

/** One load of ours: wall seconds, of which the upload, the CPU spent and the service's peak RSS. */
interface Measured {
  seconds: number;
  uploadSeconds: number;
  cpu: CpuSpent;
  peakRssMb: number;
}

/** One baseline load: wall seconds and the CPU spent (the tool's own in `processMs`). */
interface Baseline {
  seconds: number;
  cpu: CpuSpent;
}

/** One engine's runs for one key order. */
interface OrderRuns {
  baseline: Baseline[];
  csv: Measured[];
  ndjson: Measured[];
}

interface EngineRuns {
  engine: Engine;
  orders: Record<KeyOrder, OrderRuns>;
}

const newRuns = (): OrderRuns => ({ baseline: [], csv: [], ndjson: [] });

async function runLoadBench(ctx: BenchContext): Promise<Section[]> {
  ctx.log(`load: ${LOAD_ROWS} rows, ${ctx.runs} runs per engine and key order`);
  const files = {
    random: await recordFiles(ctx, LOAD_ROWS, 'random'),
    ascending: await recordFiles(ctx, LOAD_ROWS, 'ascending'),
  };
  const results: EngineRuns[] = [];
  for (const engine of ENGINES) {
    const dx = await startDx(ctx, engine);
    try {
      const r: EngineRuns = { engine, orders: { random: newRuns(), ascending: newRuns() } };
      for (let i = 1; i <= ctx.runs; i++) {
        // The order of the orders alternates run by run, so neither always follows the other.
        const orders = i % 2 === 1 ? KEY_ORDERS : [...KEY_ORDERS].reverse();
        for (const order of orders) {
          const o = r.orders[order];
          o.baseline.push(await baseline(ctx, dx, files[order].csv));
          for (const format of FORMATS) {
            o[format].push(await measuredLoad(dx, files[order][format], format, LOAD_ROWS));
          }
          ctx.log(
            `  ${engine} run ${i}, ${KEY_ORDER_NAMES[order]}: baseline ${o.baseline.at(-1)?.seconds.toFixed(2)} s, ` +
              `csv ${o.csv.at(-1)?.seconds.toFixed(2)} s, ndjson ${o.ndjson.at(-1)?.seconds.toFixed(2)} s`,
          );
        }
      }
      results.push(r);
    } finally {
      await dx.close();
    }
  }
  return [loadSection(ctx, results), bigSection(await bigLoads(ctx))];
}

/**
 * One load of ours into a new dataset, as the baselines load into a new table, with the service's
 * CPU (and its backends') and peak RSS meanwhile; the dataset is deleted afterwards, untimed. (A
 * replace of a dataset's records also diffs them for the change feed: the changes part measures
 * that against the feed off.)
 */
async function measuredLoad(dx: Dx, file: string, format: FileFormat, rows: number): Promise<Measured> {
  const datasetId = await createDataset(dx, 'load');
  const [[times, cpu], peakRssMb] = await peakRssWhile(dx.pid, () =>
    cpuWhile([dx.pid], dx.env.pg, () => loadFile(dx, datasetId, file, format, rows)),
  );
  await dx.text('DELETE', `/datasets/${datasetId}`);
  return { seconds: times.seconds, uploadSeconds: times.uploadSeconds, cpu, peakRssMb };
}

/**
 * `sqlite3 .import` into a fresh file, or `psql \copy` into a fresh table of the service's schema,
 * timed, with the tool's CPU (its rusage, once it has ended) and on PostgreSQL its backend's.
 */
async function baseline(ctx: BenchContext, dx: Dx, csv: string): Promise<Baseline> {
  if (dx.engine === 'sqlite') {
    const db = join(ctx.tmp, 'baseline.sqlite');
    const cols = PROPERTIES.map((p) => `${p[0]} ${p[2]}`).join(', ');
    try {
      await run('sqlite3', [db, `create table t (${cols});`]);
      return await timedTool(null, () =>
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
  const tag = `${dx.env.pgTag}-psql`;
  return timedTool(tag, () =>
    run('psql', [PG_URL, '-qc', `\\copy ${t} from '${csv}' csv header`], { env: { PGAPPNAME: tag } }),
  );
}

/** Times a command of a tool: wall seconds, its own CPU and that of its backends (tag). */
async function timedTool(pgTag: string | null, fn: () => Promise<unknown>): Promise<Baseline> {
  const children = endedChildrenCpuMs();
  const started = performance.now();
  const [, cpu] = await cpuWhile([], pgTag === null ? null : { url: PG_URL, tag: pgTag }, fn);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, cpu: { ...cpu, processMs: endedChildrenCpuMs() - children } };
}

/** CPU seconds of a median of samples, `–` when not measured (no PostgreSQL on SQLite). */
function cpuCells(cpu: readonly CpuSpent[]): [string, string] {
  const pg = cpu.map((c) => c.databaseMs);
  return [
    cell(median(cpu.map((c) => c.processMs)) / 1000, 2),
    pg.some((x) => x === null) ? '–' : cell(median(pg as number[]) / 1000, 2),
  ];
}

function loadSection(ctx: BenchContext, results: readonly EngineRuns[]): Section {
  const rows: string[][] = [];
  const checks: string[][] = [];
  const rssChecks: string[][] = [];
  for (const r of results) {
    const name = ENGINE_NAMES[r.engine];
    let peakOfEngine = 0;
    for (const order of KEY_ORDERS) {
      const o = r.orders[order];
      const base = median(o.baseline.map((b) => b.seconds));
      rows.push([
        name,
        KEY_ORDER_NAMES[order],
        `${BASELINE_NAME[r.engine]} (baseline)`,
        cell(base, 2),
        cell(LOAD_ROWS / base),
        '1.00×',
        ...cpuCells(o.baseline.map((b) => b.cpu)),
        '–',
        '–',
      ]);
      for (const format of FORMATS) {
        const seconds = median(o[format].map((m) => m.seconds));
        const peak = Math.max(...o[format].map((m) => m.peakRssMb));
        peakOfEngine = Math.max(peakOfEngine, peak);
        rows.push([
          name,
          KEY_ORDER_NAMES[order],
          `ours, ${format.toUpperCase()}`,
          cell(seconds, 2),
          cell(LOAD_ROWS / seconds),
          ratio(seconds, base),
          ...cpuCells(o[format].map((m) => m.cpu)),
          cell(median(o[format].map((m) => m.uploadSeconds)), 2),
          cell(peak),
        ]);
        const target = TARGET_RATIO[format];
        checks.push([
          `${name}, ${KEY_ORDER_NAMES[order]}, ${format.toUpperCase()}: ours ≤ ${target}× ${BASELINE_NAME[r.engine]}`,
          ratio(seconds, base),
          seconds / base <= target ? 'yes' : '**no**',
        ]);
      }
    }
    rssChecks.push([
      `${name}: service peak RSS < ${RSS_TARGET_MB} MB while loading ${LOAD_ROWS.toLocaleString('en')} rows`,
      `${cell(peakOfEngine)} MiB = ${cell((peakOfEngine * 2 ** 20) / 1e6)} MB`,
      peakOfEngine < RSS_LIMIT_MIB ? 'yes' : '**no**',
    ]);
  }
  return {
    title: `Record loads, ${LOAD_ROWS.toLocaleString('en')} rows × 8 columns`,
    blocks: [
      '`dx serve --role api,worker` in its own process on a fresh SQLite file or PostgreSQL schema. ' +
        '"Ours": into a new dataset each time, as the baselines load into a new table (deleted afterwards, untimed): POST uploadUrl (mode=replace), PUT the file, poll the job every ' +
        '50 ms; timed from the uploadUrl call to Completed, which must report every row loaded. ' +
        'Each key order is its own file: "random keys" holds the keys 1..N shuffled with a fixed seed ' +
        '(the same file in every run), "ascending keys" the same records sorted. ' +
        'The baselines load the same CSV into a table with the same primary key: `sqlite3 .import` into ' +
        'a fresh WAL-mode file (`id integer primary key`), `psql \\copy` into a fresh table ' +
        '(`id bigint primary key`). The NDJSON file holds the same rows (its ratio is still to the CSV ' +
        `baseline). Runs interleaved (baseline, CSV, NDJSON; the key orders alternate first), median of ${ctx.runs}. ` +
        'CPU: user + system seconds. "Process" is the service\'s (from /proc, over the load) or the ' +
        'tool\'s own (its rusage once it ended); "PostgreSQL" is the server\'s backends serving that ' +
        "process's connections (found by application_name, read from /proc; background writers and " +
        'other clients of the server not counted). Wall time above the CPU of the busiest process means ' +
        "waiting. Peak RSS: the service process's alone, the highest of the runs (VmHWM reset before " +
        'each load, and VmRSS sampled every 50 ms). "Upload": until the PUT was answered (the file ' +
        'stored); the rest is the job: queueing, parsing, writing, committing.',
      table(
        [
          'engine',
          'keys',
          'load',
          'seconds',
          'rows/s',
          '÷ baseline',
          'process CPU s',
          'PostgreSQL CPU s',
          'upload s',
          'service peak RSS MiB',
        ],
        rows,
      ),
      '**Targets**',
      table(['target', 'measured', 'holds'], [...checks, ...rssChecks]),
      ...(LOAD_ROWS === 1_000_000
        ? []
        : [
            `The RSS target is stated for 1,000,000 rows; this run loaded ${LOAD_ROWS.toLocaleString('en')}.`,
          ]),
    ],
  };
}

interface BigLoad {
  engine: Engine;
  seconds: number;
  cpu: CpuSpent;
  rssBeforeMb: number;
  peakRssMb: number;
}

/** One load of BIG_ROWS random-order rows (CSV) per engine, each into a freshly started service. */
async function bigLoads(ctx: BenchContext): Promise<BigLoad[]> {
  if (BIG_ROWS <= 0) return [];
  const file = join(ctx.tmp, `records-${BIG_ROWS}-random.csv`);
  const out: BigLoad[] = [];
  try {
    ctx.log(`load: ${BIG_ROWS} rows (random keys) for the memory check`);
    await generate(file, BIG_ROWS, 'csv', 'random');
    for (const engine of ENGINES) {
      const dx = await startDx(ctx, engine);
      try {
        const rssBeforeMb = rssMb(dx.pid);
        const m = await measuredLoad(dx, file, 'csv', BIG_ROWS);
        out.push({ engine, seconds: m.seconds, cpu: m.cpu, rssBeforeMb, peakRssMb: m.peakRssMb });
        ctx.log(`  ${engine}: ${m.seconds.toFixed(1)} s, peak RSS ${m.peakRssMb.toFixed(0)} MiB`);
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
  return {
    title,
    blocks: [
      `One CSV load of ${BIG_ROWS.toLocaleString('en')} rows with the keys in random order (the same ` +
        'fixed seed) per engine, ours only, into a freshly started service (one run). RSS before: the idle ' +
        'service after start; peak: its highest while loading (VmHWM reset at the start, VmRSS sampled ' +
        'every 50 ms). CPU as in the loads above.' +
        (BIG_ROWS === 10_000_000
          ? ''
          : ' The target is stated for 10,000,000 rows; this run loaded another count.'),
      table(
        [
          'engine',
          'seconds',
          'rows/s',
          'service CPU s',
          'PostgreSQL CPU s',
          'RSS before MiB',
          'peak RSS MiB',
        ],
        loads.map((l) => [
          ENGINE_NAMES[l.engine],
          cell(l.seconds, 1),
          cell(BIG_ROWS / l.seconds),
          ...cpuCells([l.cpu]),
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
          l.peakRssMb < RSS_LIMIT_MIB ? 'yes' : '**no**',
        ]),
      ),
    ],
  };
}
