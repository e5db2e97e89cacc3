// The `exports` part: with the load part's N records (8 columns) loaded into `dx serve` (its own
// process), records:retrieve as CSV and as NDJSON (the time until the link is answered, then to the
// download's last byte) side by side with the engine's own command-line tool writing the same rows
// as CSV in the same (primary-key) order: `sqlite3 -csv` on the service's file, `psql \copy (SELECT
// …) TO STDOUT CSV` on its schema; each tool's output is read through a pipe by this process, as
// our download is. The service's peak RSS during each download shows whether memory stays flat.
import { spawn } from 'node:child_process';
import { downloadLines } from './lib/download.js';
import { createDataset, ENGINE_NAMES, ENGINES, loadFile, PG_URL, startDx, type Dx, type Engine } from './lib/dx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { peakRssWhile, rssMb } from './lib/procfs.js';
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

interface Sample {
  answerMs: number;
  seconds: number;
  bytes: number;
  peakRssMb: number;
}

interface EngineResult {
  idleRssMb: number;
  csv: Sample[];
  ndjson: Sample[];
  tool: { seconds: number; bytes: number }[];
}

async function runExportsBench(ctx: BenchContext): Promise<Section[]> {
  // The tools come from Debian's packages sqlite3 and postgresql-client, installed as for nginx.
  const tools = { sqlite: ensureCommand('sqlite3', ['sqlite3']), postgres: ensureCommand('psql', ['postgresql-client']) };
  ctx.log(`exports: ${LOAD_ROWS} records, ${ctx.runs} runs per engine`);
  const files = await recordFiles(ctx, LOAD_ROWS);
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
  const [sample, peakRssMb] = await peakRssWhile(dx.pid, async () => {
    const started = performance.now();
    const { url } = await dx.call<{ url: string }>('POST', `/datasets/${datasetId}/records:retrieve`, {
      contentType,
    });
    const answerMs = performance.now() - started;
    const { bytes, lines } = await downloadLines(url);
    const records = contentType === 'csv' ? lines - 1 : lines;
    if (records !== LOAD_ROWS) throw new Error(`records:retrieve ${contentType}: ${records} records, expected ${LOAD_ROWS}`);
    return { answerMs, seconds: (performance.now() - started) / 1000, bytes };
  });
  return { ...sample, peakRssMb };
}

/** The engine's tool writing the same rows as CSV in key order, read through a pipe. */
async function toolCsv(dx: Dx, table: string): Promise<{ seconds: number; bytes: number }> {
  const columns = PROPERTIES.map(([name]) => `"${name}"`).join(', ');
  const select = `select ${columns} from "${table}" order by "id"`;
  const [command, args] =
    dx.sqliteFile !== null
      ? ['sqlite3', ['-csv', dx.sqliteFile, select]]
      : ['psql', [PG_URL, '-qc', `set search_path = "${dx.schema}"`, '-c', `\\copy (${select}) to stdout csv`]];
  const started = performance.now();
  const bytes = await new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let n = 0;
    child.stdout.on('data', (c: Buffer) => (n += c.length));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(n) : reject(new Error(`${command} exited ${code}`))));
  });
  return { seconds: (performance.now() - started) / 1000, bytes };
}

function exportsSection(ctx: BenchContext, results: ReadonlyMap<Engine, EngineResult>): Section {
  const rows: string[][] = [];
  for (const [engine, r] of results) {
    const toolSeconds = median(r.tool.map((t) => t.seconds));
    rows.push([
      ENGINE_NAMES[engine],
      TOOL_NAME[engine],
      '–',
      cell(toolSeconds, 2),
      '1.00×',
      cell(median(r.tool.map((t) => t.bytes)) / 1e6, 1),
      '–',
    ]);
    for (const [format, samples] of [
      ['records:retrieve CSV', r.csv],
      ['records:retrieve NDJSON', r.ndjson],
    ] as const) {
      const seconds = median(samples.map((s) => s.seconds));
      rows.push([
        ENGINE_NAMES[engine],
        format,
        cell(median(samples.map((s) => s.answerMs)), 0),
        cell(seconds, 2),
        ratio(seconds, toolSeconds),
        cell(median(samples.map((s) => s.bytes)) / 1e6, 1),
        `${cell(r.idleRssMb)} → ${cell(Math.max(...samples.map((s) => s.peakRssMb)))}`,
      ]);
    }
  }
  return {
    title: `Exports, ${LOAD_ROWS.toLocaleString('en')} records × 8 columns`,
    blocks: [
      'The load part\'s records loaded once into `dx serve --role api,worker` in its own process. ' +
        'records:retrieve is timed from the POST to the last byte of the download (streamed, lines ' +
        'counted), and "answer" is the time until the POST answered the link. The tools write the same ' +
        'rows of the same table as CSV in primary-key order, read through a pipe by the bench: ' +
        '`sqlite3 -csv` on the service\'s file, `psql \\copy (SELECT …) TO STDOUT CSV` on its schema. ' +
        `Runs interleaved; median of ${ctx.runs}; ratio against the tool; RSS: the service's before the ` +
        'first download → its highest during the downloads.',
      table(['engine', 'export', 'answer ms', 'seconds to last byte', 'vs tool', 'MB', 'service RSS MiB'], rows),
    ],
  };
}
