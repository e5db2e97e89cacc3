// The `changes` part: what the change feed costs, on N records × 8 columns (keys in random order).
// Per engine, two `dx serve` processes side by side: one as shipped, one with the feed off
// (CHANGES_RETENTION_HOURS=0: no change is recorded). Each gets the same dataset, then, run after
// run, the same loads: a replace that changes 1 % of the records (the file holds every record, a
// hundredth of them edited; the next run edits them back), and an upsert of 10,000 records into
// them (two edits of the same keys, in turn). On the feed's side, after each replace, the changes
// are read through the feed from the cursor a records read gave before it, and timed beside a
// full export (records:retrieve CSV, to the last byte) of the same service.
import { join } from 'node:path';
import { cpuWhile, type CpuSpent } from './lib/cpu.js';
import { downloadLines } from './lib/download.js';
import {
  createDataset,
  ENGINE_NAMES,
  ENGINES,
  loadFile,
  startDx,
  type BenchLoadMode,
  type Dx,
  type Engine,
} from './lib/dx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { peakRssWhile } from './lib/procfs.js';
import { generate, keysInOrder, LOAD_ROWS } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { cell, median } from './lib/stats.js';

/** Every CHANGE_EVERY-th key is edited by the replace: 1 %. */
const CHANGE_EVERY = 100;
/** Records of each upsert. */
const UPSERTS = 10_000;
/** Records per feed page: the most a page holds. */
const FEED_PAGE = 10_000;
/** Targets: the feed's replace and upsert ÷ the same without the feed; the feed's read ÷ an export. */
const TARGET = { replace: 1.5, upsert: 2, readVsExport: 1 / 20 } as const;
const RSS_TARGET_MB = 300;
const RSS_LIMIT_MIB = (RSS_TARGET_MB * 1e6) / 2 ** 20;

export const changesPart: BenchPart = {
  describe: `the change feed's cost on ${LOAD_ROWS} records: a replace changing 1 %, ${UPSERTS} upserts (with and without the feed), reading the changes vs a full export`,
  run: runChangesBench,
};

/** The two services of an engine. */
type Side = 'feed' | 'noFeed';
const SIDES: readonly Side[] = ['feed', 'noFeed'];
const SIDE_NAMES: Record<Side, string> = { feed: 'with the feed', noFeed: 'feed off' };

interface Timed {
  seconds: number;
  cpu: CpuSpent;
  peakRssMb: number;
}

interface SideRuns {
  replace: Timed[];
  upsert: Timed[];
  /** A full export after each replace: on both sides, so that both processes do the same work but
   * for the feed (what an export leaves in memory weighs on both peaks alike). */
  fullExport: Timed[];
}

interface EngineRuns {
  engine: Engine;
  sides: Record<Side, SideRuns>;
  /** The feed's side only: reading the replace's changes. */
  feedRead: Timed[];
}

/** The files: every record as first loaded, the same with 1 % edited, and two upserts. */
interface Files {
  base: string;
  edited: string;
  upserts: [string, string];
}

async function writeFiles(ctx: BenchContext): Promise<Files> {
  const files: Files = {
    base: join(ctx.tmp, `changes-base-${LOAD_ROWS}.csv`),
    edited: join(ctx.tmp, `changes-edited-${LOAD_ROWS}.csv`),
    upserts: [join(ctx.tmp, 'changes-upsert-1.csv'), join(ctx.tmp, 'changes-upsert-2.csv')],
  };
  await generate(files.base, LOAD_ROWS, 'csv', 'random');
  await generate(files.edited, LOAD_ROWS, 'csv', 'random', {
    variantOf: (key) => (key % CHANGE_EVERY === 0 ? 1 : 0),
  });
  // Existing keys, none of them among those the replace edits, in random order.
  const keys = Array.from(keysInOrder(LOAD_ROWS, 'random'))
    .filter((key) => key % CHANGE_EVERY !== 0)
    .slice(0, UPSERTS);
  for (const [i, file] of files.upserts.entries()) {
    await generate(file, UPSERTS, 'csv', 'random', { keys, variantOf: () => i + 2 });
  }
  return files;
}

async function runChangesBench(ctx: BenchContext): Promise<Section[]> {
  ctx.log(`changes: ${LOAD_ROWS} records, ${ctx.runs} runs per engine`);
  const files = await writeFiles(ctx);
  const results: EngineRuns[] = [];
  for (const engine of ENGINES) {
    const services: Record<Side, Dx> = {
      feed: await startDx(ctx, engine),
      noFeed: await startDx(ctx, engine, { CHANGES_RETENTION_HOURS: '0' }),
    };
    try {
      results.push(await measureEngine(ctx, engine, services, files));
    } finally {
      for (const dx of Object.values(services)) await dx.close();
    }
  }
  return [changesSection(ctx, results)];
}

async function measureEngine(
  ctx: BenchContext,
  engine: Engine,
  services: Record<Side, Dx>,
  files: Files,
): Promise<EngineRuns> {
  // Two datasets a side, so that the replaces (which hold every record) never undo the upserts.
  const datasets = {} as Record<Side, { replaced: string; upserted: string }>;
  for (const side of SIDES) {
    const dx = services[side];
    datasets[side] = {
      replaced: await createDataset(dx, 'replaced'),
      upserted: await createDataset(dx, 'upserted'),
    };
    for (const id of Object.values(datasets[side])) await loadFile(dx, id, files.base, 'csv', LOAD_ROWS);
  }
  const r: EngineRuns = {
    engine,
    sides: {
      feed: { replace: [], upsert: [], fullExport: [] },
      noFeed: { replace: [], upsert: [], fullExport: [] },
    },
    feedRead: [],
  };
  for (let i = 1; i <= ctx.runs; i++) {
    // Edits 1 % on odd runs, edits them back on even runs: each replace changes the same share.
    const replaceWith = i % 2 === 1 ? files.edited : files.base;
    const upsertWith = files.upserts[(i - 1) % 2] as string;
    // The sides alternate which goes first.
    for (const side of i % 2 === 1 ? SIDES : [...SIDES].reverse()) {
      const dx = services[side];
      const { replaced, upserted } = datasets[side];
      const cursor = side === 'feed' ? await recordsCursor(dx, replaced) : null;
      r.sides[side].replace.push(await timedLoad(dx, replaced, replaceWith, 'replace'));
      if (cursor !== null) {
        r.feedRead.push(
          await measured(dx, () => readChanges(dx, replaced, cursor, LOAD_ROWS / CHANGE_EVERY)),
        );
      }
      r.sides[side].fullExport.push(await measured(dx, () => fullExport(dx, replaced)));
      r.sides[side].upsert.push(await timedLoad(dx, upserted, upsertWith, 'upsert'));
    }
    ctx.log(
      `  ${engine} run ${i}: replace ${SIDES.map((s) => r.sides[s].replace.at(-1)?.seconds.toFixed(2)).join(' / ')} s, ` +
        `upsert ${SIDES.map((s) => r.sides[s].upsert.at(-1)?.seconds.toFixed(2)).join(' / ')} s (feed / off), ` +
        `feed read ${r.feedRead.at(-1)?.seconds.toFixed(2)} s, ` +
        `export ${SIDES.map((s) => r.sides[s].fullExport.at(-1)?.seconds.toFixed(2)).join(' / ')} s`,
    );
  }
  return r;
}

/** Runs `fn` with the service's CPU (and its backends') and its peak RSS meanwhile. */
async function measured(dx: Dx, fn: () => Promise<unknown>): Promise<Timed> {
  const started = performance.now();
  const [[, cpu], peakRssMb] = await peakRssWhile(dx.pid, () => cpuWhile([dx.pid], dx.env.pg, fn));
  return { seconds: (performance.now() - started) / 1000, cpu, peakRssMb };
}

const timedLoad = (dx: Dx, datasetId: string, file: string, mode: BenchLoadMode) =>
  measured(dx, () => loadFile(dx, datasetId, file, 'csv', LOAD_ROWS, 50, mode));

interface RecordsPageView {
  metadata: { changesCursor: string };
}

/** The cursor that matches the dataset's records now (a records read's). */
async function recordsCursor(dx: Dx, datasetId: string): Promise<string> {
  const page = await dx.call<RecordsPageView>('GET', `/datasets/${datasetId}/records?pageSize=1`);
  return page.metadata.changesCursor;
}

interface ChangePageView {
  metadata: { count: number; nextCursor: string; hasMore: boolean };
}

/** Reads the feed from `since` to its end; throws unless it lists exactly `expected` changes. */
async function readChanges(dx: Dx, datasetId: string, since: string, expected: number): Promise<void> {
  let cursor = since;
  let count = 0;
  for (;;) {
    const page = await dx.call<ChangePageView>(
      'GET',
      `/datasets/${datasetId}/changes?since=${encodeURIComponent(cursor)}&pageSize=${FEED_PAGE}`,
    );
    count += page.metadata.count;
    cursor = page.metadata.nextCursor;
    if (!page.metadata.hasMore) break;
  }
  if (count !== expected) throw new Error(`the feed listed ${count} changes, expected ${expected}`);
}

/** records:retrieve as CSV, downloaded to the last byte; throws unless every record came. */
async function fullExport(dx: Dx, datasetId: string): Promise<void> {
  const { url } = await dx.call<{ url: string }>('POST', `/datasets/${datasetId}/records:retrieve`, {
    contentType: 'csv',
  });
  const { lines } = await downloadLines(url);
  if (lines - 1 !== LOAD_ROWS) throw new Error(`the export held ${lines - 1} records, expected ${LOAD_ROWS}`);
}

/** A row of the table: the median time, CPU and the highest peak RSS of `runs`. */
function timedCells(runs: readonly Timed[]): string[] {
  const pg = runs.map((t) => t.cpu.databaseMs);
  return [
    cell(median(runs.map((t) => t.seconds)), 2),
    cell(median(runs.map((t) => t.cpu.processMs)) / 1000, 2),
    pg.some((x) => x === null) ? '–' : cell(median(pg as number[]) / 1000, 2),
    cell(Math.max(...runs.map((t) => t.peakRssMb))),
  ];
}

function changesSection(ctx: BenchContext, results: readonly EngineRuns[]): Section {
  const rows: string[][] = [];
  const checks: string[][] = [];
  const seconds = (runs: readonly Timed[]) => median(runs.map((t) => t.seconds));
  const check = (what: string, measuredRatio: number, target: number) =>
    checks.push([what, `${measuredRatio.toFixed(2)}×`, measuredRatio <= target ? 'yes' : '**no**']);
  for (const r of results) {
    const name = ENGINE_NAMES[r.engine];
    for (const side of SIDES) {
      rows.push([
        name,
        `replace, 1 % of the records changed, ${SIDE_NAMES[side]}`,
        ...timedCells(r.sides[side].replace),
      ]);
      rows.push([
        name,
        `upsert of ${UPSERTS.toLocaleString('en')} records, ${SIDE_NAMES[side]}`,
        ...timedCells(r.sides[side].upsert),
      ]);
    }
    rows.push([
      name,
      `reading the replace's ${(LOAD_ROWS / CHANGE_EVERY).toLocaleString('en')} changes through the feed`,
      ...timedCells(r.feedRead),
    ]);
    for (const side of SIDES) {
      rows.push([
        name,
        `full export, records:retrieve CSV to the last byte, ${SIDE_NAMES[side]}`,
        ...timedCells(r.sides[side].fullExport),
      ]);
    }
    const replace = seconds(r.sides.feed.replace) / seconds(r.sides.noFeed.replace);
    const upsert = seconds(r.sides.feed.upsert) / seconds(r.sides.noFeed.upsert);
    const read = seconds(r.feedRead) / seconds(r.sides.feed.fullExport);
    check(`${name}: replace changing 1 % ≤ ${TARGET.replace}× without the feed`, replace, TARGET.replace);
    check(
      `${name}: ${UPSERTS.toLocaleString('en')} upserts ≤ ${TARGET.upsert}× without the feed`,
      upsert,
      TARGET.upsert,
    );
    check(`${name}: reading the changes ≤ 1/20 of a full export`, read, TARGET.readVsExport);
    const peakOf = (side: Side) => {
      const { replace, upsert, fullExport } = r.sides[side];
      const steps = [...replace, ...upsert, ...fullExport, ...(side === 'feed' ? r.feedRead : [])];
      return Math.max(...steps.map((t) => t.peakRssMb));
    };
    const peak = peakOf('feed');
    checks.push([
      `${name}: service peak RSS < ${RSS_TARGET_MB} MB with the feed`,
      `${cell(peak)} MiB = ${cell((peak * 2 ** 20) / 1e6)} MB (feed off: ${cell(peakOf('noFeed'))} MiB)`,
      peak < RSS_LIMIT_MIB ? 'yes' : '**no**',
    ]);
  }
  return {
    title: `The change feed's cost, ${LOAD_ROWS.toLocaleString('en')} records × 8 columns`,
    blocks: [
      `Two \`dx serve --role api,worker\` processes per engine, each on its own SQLite file or PostgreSQL schema: one as shipped, one with the feed off (\`CHANGES_RETENTION_HOURS=0\`). Each holds two datasets of the load part's records (random key order), one for the replaces and one for the upserts, and gets the same loads in turn, the sides alternating which goes first: a replace with every record, a hundredth of them edited (the next run edits them back), so each replace changes ${(LOAD_ROWS / CHANGE_EVERY).toLocaleString('en')} records; then an upsert of ${UPSERTS.toLocaleString('en')} existing records (two edits in turn). Timed from the uploadUrl call to Completed, as the load part. With the feed, before each replace a records read gives the cursor, and after it the feed is read from there to its end (pages of ${FEED_PAGE.toLocaleString('en')}, every change counted), and on both sides the whole dataset is then exported (records:retrieve CSV, to the last byte), so that the two processes differ only by the feed. Median of ${ctx.runs} runs; CPU: user + system seconds of the service and of the PostgreSQL backends serving it (by application_name); peak RSS: the service's highest (sampled every 50 ms).`,
      table(['engine', 'what', 'seconds', 'service CPU s', 'PostgreSQL CPU s', 'service peak RSS MiB'], rows),
      '**Targets**',
      table(['target', 'measured', 'holds'], checks),
    ],
  };
}
