// The `exports` part: with the load part's N records (8 columns) loaded into `dx serve` (its own
// process), records:retrieve as CSV and as NDJSON (the time until the link is answered, then to the
// download's last byte) side by side with the engine's own command-line tool writing the same rows
// as CSV in the same (primary-key) order: `sqlite3 -csv` on the service's file, `psql \copy (SELECT
// …) TO STDOUT CSV` on its schema; each tool's output is read through a pipe by this process, as
// our download is. The service's peak RSS during each download shows whether memory stays flat;
// the CPU of the service, of the tool and of PostgreSQL's backends is reported beside the time.
import { spawn } from 'node:child_process';
import { cpuWhile, type CpuSpent } from './lib/cpu.js';
import { downloadLines } from './lib/download.js';
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
import { LOAD_ROWS, PROPERTIES, recordFiles } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { run } from './lib/spawn.js';
import { cell, median, ratio } from './lib/stats.js';
import { ensureCommand } from './lib/tools.js';

export const exportsPart: BenchPart = {
  describe: `records:retrieve (CSV, NDJSON) to the last byte vs sqlite3 -csv and psql \\copy, ${LOAD_ROWS} records`,
  run: runExportsBench,
};

const TOOL_NAME: Record<Engine, string> = { sqlite: 'sqlite3 -csv', postgres: 'psql \\copy … to stdout csv' };
/** Targets: time to the last byte ÷ the tool's (which writes CSV), by our format. */
const TARGET_RATIO = { csv: 1.3, ndjson: 1.6 } as const;
/** The memory target: the service's peak RSS while exporting, in MB (10^6 bytes). */
const RSS_TARGET_MB = 300;

interface Sample {
  answerMs: number;
  seconds: number;
  bytes: number;
  peakRssMb: number;
  cpu: CpuSpent;
}

interface ToolSample {
  seconds: number;
  bytes: number;
  /** The tool's own CPU in processMs (its rusage), its backend's on PostgreSQL. */
  cpu: CpuSpent;
}

interface EngineResult {
  idleRssMb: number;
  csv: Sample[];
  ndjson: Sample[];
  tool: ToolSample[];
}

async function runExportsBench(ctx: BenchContext): Promise<Section[]> {
  // The tools come from Debian's packages sqlite3 and postgresql-client, installed as for nginx.
  const tools = {
    sqlite: ensureCommand('sqlite3', ['sqlite3']),
    postgres: ensureCommand('psql', ['postgresql-client']),
  };
  ctx.log(`exports: ${LOAD_ROWS} records, ${ctx.runs} runs per engine`);
  const files = await recordFiles(ctx, LOAD_ROWS, 'random');
  const results = new Map<Engine, EngineResult>();
  for (const engine of ENGINES) {
    const dx = await startDx(ctx, engine);
    try {
      const datasetId = await createDataset(dx, 'exports');
      await loadFile(dx, datasetId, files.csv, 'csv', LOAD_ROWS);
      const table = await recordsTable(dx, datasetId);
      const r: EngineResult = { idleRssMb: rssMb(dx.pid), csv: [], ndjson: [], tool: [] };
      for (let i = 1; i <= ctx.runs; i++) {
        // Interleaved run by run, so a busy moment of the machine weighs on every side alike.
        r.csv.push(await retrieve(dx, datasetId, 'csv'));
        r.ndjson.push(await retrieve(dx, datasetId, 'json'));
        if (tools[engine]) r.tool.push(await toolCsv(dx, table));
        ctx.log(
          `  ${engine} run ${i}: csv ${r.csv.at(-1)?.seconds.toFixed(2)} s, ndjson ${r.ndjson.at(-1)?.seconds.toFixed(2)} s, ` +
            `${TOOL_NAME[engine]} ${r.tool.at(-1)?.seconds.toFixed(2) ?? '–'} s`,
        );
      }
      results.set(engine, r);
    } finally {
      await dx.close();
    }
  }
  return [exportsSection(ctx, results)];
}

/** The dataset's current records table, read from the service's database. */
async function recordsTable(dx: Dx, datasetId: string): Promise<string> {
  const query = `select records_table from datasets where id = '${datasetId}'`;
  const out =
    dx.sqliteFile !== null
      ? await run('sqlite3', [dx.sqliteFile, query])
      : await run('psql', [PG_URL, '-Atc', `set search_path = "${dx.schema}"; ${query}`]);
  return out.trim().split('\n').at(-1) ?? '';
}

/** records:retrieve, then the download to its last byte; checks the record count. */
async function retrieve(dx: Dx, datasetId: string, contentType: 'csv' | 'json'): Promise<Sample> {
  const [[sample, cpu], peakRssMb] = await peakRssWhile(dx.pid, () =>
    cpuWhile([dx.pid], dx.env.pg, async () => {
      const started = performance.now();
      const { url } = await dx.call<{ url: string }>('POST', `/datasets/${datasetId}/records:retrieve`, {
        contentType,
      });
      const answerMs = performance.now() - started;
      const { bytes, lines } = await downloadLines(url);
      const records = contentType === 'csv' ? lines - 1 : lines;
      if (records !== LOAD_ROWS)
        throw new Error(`records:retrieve ${contentType}: ${records} records, expected ${LOAD_ROWS}`);
      return { answerMs, seconds: (performance.now() - started) / 1000, bytes };
    }),
  );
  return { ...sample, peakRssMb, cpu };
}

/** The engine's tool writing the same rows as CSV in key order, read through a pipe; its CPU is
 * its rusage once it ended, and on PostgreSQL its backend's (found by application_name). */
async function toolCsv(dx: Dx, table: string): Promise<ToolSample> {
  const columns = PROPERTIES.map(([name]) => `"${name}"`).join(', ');
  const select = `select ${columns} from "${table}" order by "id"`;
  const [command, args] =
    dx.sqliteFile !== null
      ? ['sqlite3', ['-csv', dx.sqliteFile, select]]
      : [
          'psql',
          [PG_URL, '-qc', `set search_path = "${dx.schema}"`, '-c', `\\copy (${select}) to stdout csv`],
        ];
  const tag = `${dx.env.pgTag}-psql`;
  const children = endedChildrenCpuMs();
  const started = performance.now();
  const [bytes, cpu] = await cpuWhile(
    [],
    dx.env.pg === null ? null : { url: PG_URL, tag },
    () =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(command, args, {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, PGAPPNAME: tag },
        });
        let n = 0;
        child.stdout.on('data', (c: Buffer) => (n += c.length));
        child.once('error', reject);
        child.once('close', (code) =>
          code === 0 ? resolve(n) : reject(new Error(`${command} exited ${code}`)),
        );
      }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, bytes, cpu: { ...cpu, processMs: endedChildrenCpuMs() - children } };
}

/** Median CPU seconds of samples: the process's, and PostgreSQL's (`–` on SQLite). */
function cpuCells(cpu: readonly CpuSpent[]): [string, string] {
  const pg = cpu.map((c) => c.databaseMs);
  return [
    cell(median(cpu.map((c) => c.processMs)) / 1000, 2),
    pg.some((x) => x === null) ? '–' : cell(median(pg as number[]) / 1000, 2),
  ];
}

function exportsSection(ctx: BenchContext, results: ReadonlyMap<Engine, EngineResult>): Section {
  const rows: string[][] = [];
  const checks: string[][] = [];
  const limitMiB = (RSS_TARGET_MB * 1e6) / 2 ** 20;
  for (const [engine, r] of results) {
    const name = ENGINE_NAMES[engine];
    const toolSeconds = median(r.tool.map((t) => t.seconds));
    rows.push([
      name,
      TOOL_NAME[engine],
      '–',
      cell(toolSeconds, 2),
      '1.00×',
      ...cpuCells(r.tool.map((t) => t.cpu)),
      cell(median(r.tool.map((t) => t.bytes)) / 1e6, 1),
      '–',
    ]);
    let peak = 0;
    for (const [format, label, samples] of [
      ['csv', 'records:retrieve CSV', r.csv],
      ['ndjson', 'records:retrieve NDJSON', r.ndjson],
    ] as const) {
      const seconds = median(samples.map((s) => s.seconds));
      const formatPeak = Math.max(...samples.map((s) => s.peakRssMb));
      peak = Math.max(peak, formatPeak);
      rows.push([
        name,
        label,
        cell(median(samples.map((s) => s.answerMs)), 0),
        cell(seconds, 2),
        ratio(seconds, toolSeconds),
        ...cpuCells(samples.map((s) => s.cpu)),
        cell(median(samples.map((s) => s.bytes)) / 1e6, 1),
        `${cell(r.idleRssMb)} → ${cell(formatPeak)}`,
      ]);
      checks.push([
        `${name}, ${format.toUpperCase()}: to the last byte ≤ ${TARGET_RATIO[format]}× ${TOOL_NAME[engine]}`,
        ratio(seconds, toolSeconds),
        seconds / toolSeconds <= TARGET_RATIO[format] ? 'yes' : '**no**',
      ]);
    }
    checks.push([
      `${name}: service peak RSS < ${RSS_TARGET_MB} MB while exporting`,
      `${cell(peak)} MiB = ${cell((peak * 2 ** 20) / 1e6)} MB`,
      peak < limitMiB ? 'yes' : '**no**',
    ]);
  }
  return {
    title: `Exports, ${LOAD_ROWS.toLocaleString('en')} records × 8 columns`,
    blocks: [
      "The load part's random-key records loaded once into `dx serve --role api,worker` in its own process. " +
        'records:retrieve is timed from the POST to the last byte of the download (streamed, lines ' +
        'counted), and "answer" is the time until the POST answered the link. The tools write the same ' +
        'rows of the same table as CSV in primary-key order, read through a pipe by the bench: ' +
        "`sqlite3 -csv` on the service's file, `psql \\copy (SELECT …) TO STDOUT CSV` on its schema. " +
        `Runs interleaved; median of ${ctx.runs}; ratio against the tool (CSV for both of ours). ` +
        'CPU: user + system seconds per export; "process" is the service\'s over the call and the ' +
        'download, or the tool\'s own (its rusage once it ended); "PostgreSQL" the server\'s backends ' +
        'serving that process (found by application_name; background processes and other clients not ' +
        "counted). RSS: the service's before the first download → its highest during that format's downloads.",
      table(
        [
          'engine',
          'export',
          'answer ms',
          'seconds to last byte',
          'vs tool',
          'process CPU s',
          'PostgreSQL CPU s',
          'MB',
          'service RSS MiB',
        ],
        rows,
      ),
      '**Targets**',
      table(['target', 'measured', 'holds'], checks),
    ],
  };
}
