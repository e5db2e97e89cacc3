// The `reads` part: with the load part's N records loaded into `dx serve` (its own process), the
// whole dataset read back as a client would: records:retrieve as CSV and as NDJSON (first call,
// which writes the export, and a repeated one, which reuses it), and every page of 10,000 records.
import { downloadLines } from './lib/download.js';
import { createDataset, ENGINE_NAMES, ENGINES, loadFile, startDx, type Dx, type Engine } from './lib/dx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { peakRssWhile } from './lib/procfs.js';
import { LOAD_ROWS, recordFiles } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { cell, median } from './lib/stats.js';

const PAGE_SIZE = 10_000;

export const readsPart: BenchPart = {
  describe: `records:retrieve (CSV, NDJSON; first and cached) and paging, ${LOAD_ROWS} records`,
  run: runReadsBench,
};

/** One read: its time and size, and the service's peak RSS meanwhile. */
interface Read {
  seconds: number;
  bytes: number;
  peakRssMb: number;
}

const retrieval = (format: 'csv' | 'json', call: string) => ({
  label: `retrieve ${format.toUpperCase()}, ${call}`,
  read: (dx: Dx, datasetId: string) => retrieve(dx, datasetId, format),
});
const FIRST = 'first call (writes the export)';
const REPEATED = 'repeated (cached export)';
const READS = [
  retrieval('csv', FIRST),
  retrieval('csv', REPEATED),
  retrieval('json', FIRST),
  retrieval('json', REPEATED),
  { label: `GET records, pages of ${PAGE_SIZE}`, read: pages },
];

async function runReadsBench(ctx: BenchContext): Promise<Section[]> {
  ctx.log(`reads: ${LOAD_ROWS} records, ${ctx.runs} runs per engine`);
  const files = await recordFiles(ctx, LOAD_ROWS);
  const results = new Map<Engine, Read[][]>();
  for (const engine of ENGINES) {
    const dx = await startDx(ctx, engine);
    try {
      const datasetId = await createDataset(dx, 'reads');
      const samples: Read[][] = READS.map(() => []);
      for (let i = 1; i <= ctx.runs; i++) {
        // Every run reloads the records: a new generation, so its first export is written anew.
        await loadFile(dx, datasetId, files.csv, 'csv', LOAD_ROWS);
        for (const [j, r] of READS.entries()) {
          const [{ seconds, bytes }, peakRssMb] = await peakRssWhile(dx.pid, () => r.read(dx, datasetId));
          samples[j]?.push({ seconds, bytes, peakRssMb });
        }
        ctx.log(
          `  ${engine} run ${i}: ${samples.map((s) => `${s.at(-1)?.seconds.toFixed(2)} s`).join(', ')}`,
        );
      }
      results.set(engine, samples);
    } finally {
      await dx.close();
    }
  }
  return [readsSection(ctx, results)];
}

/** records:retrieve, timed from the POST to the download's last byte; checks the record count. */
async function retrieve(dx: Dx, datasetId: string, contentType: 'csv' | 'json') {
  const started = performance.now();
  const { url } = await dx.call<{ url: string }>('POST', `/datasets/${datasetId}/records:retrieve`, {
    contentType,
  });
  const { bytes, lines } = await downloadLines(url);
  const seconds = (performance.now() - started) / 1000;
  // CSV has a header line; NDJSON one line per record.
  const records = contentType === 'csv' ? lines - 1 : lines;
  if (records !== LOAD_ROWS)
    throw new Error(`records:retrieve ${contentType}: ${records} records, expected ${LOAD_ROWS}`);
  return { seconds, bytes };
}

/** Every page in turn, each parsed as a client would; checks the record count. */
async function pages(dx: Dx, datasetId: string) {
  const started = performance.now();
  let bytes = 0;
  let records = 0;
  let token: string | null = null;
  do {
    const query = new URLSearchParams({
      pageSize: String(PAGE_SIZE),
      ...(token !== null ? { pageToken: token } : {}),
    });
    const text = await dx.text('GET', `/datasets/${datasetId}/records?${query.toString()}`);
    const page = JSON.parse(text) as {
      metadata: { count: number; nextPageToken: string | null };
      data: unknown[];
    };
    if (page.data.length !== page.metadata.count) throw new Error('a page holds another count than it says');
    bytes += Buffer.byteLength(text);
    records += page.data.length;
    token = page.metadata.nextPageToken;
  } while (token !== null);
  if (records !== LOAD_ROWS) throw new Error(`pages: ${records} records, expected ${LOAD_ROWS}`);
  return { seconds: (performance.now() - started) / 1000, bytes };
}

function readsSection(ctx: BenchContext, results: ReadonlyMap<Engine, Read[][]>): Section {
  const rows: string[][] = [];
  for (const [engine, samples] of results) {
    for (const [j, r] of READS.entries()) {
      const s = samples[j] ?? [];
      const seconds = median(s.map((x) => x.seconds));
      rows.push([
        ENGINE_NAMES[engine],
        r.label,
        cell(seconds, 2),
        cell(LOAD_ROWS / seconds),
        cell(median(s.map((x) => x.bytes)) / 1e6, 1),
        cell(Math.max(...s.map((x) => x.peakRssMb))),
      ]);
    }
  }
  return {
    title: `Record reads, ${LOAD_ROWS.toLocaleString('en')} records`,
    blocks: [
      `The load part's records (CSV) loaded into \`dx serve --role api,worker\` in its own process, ` +
        'reloaded before each run so its first records:retrieve writes the export anew (the service ' +
        "keeps an unchanged dataset's export, which the repeated call reuses). records:retrieve is timed " +
        'from the POST to the last byte of the download, streamed and its lines counted; pages are ' +
        'fetched one after another, each parsed. Every read must return all the records. ' +
        `Median of ${ctx.runs} runs; peak RSS: the service process's, the highest of the runs.`,
      table(['engine', 'read', 'seconds', 'records/s', 'MB read', 'service peak RSS MiB'], rows),
    ],
  };
}
