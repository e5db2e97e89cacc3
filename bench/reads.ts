// The `reads` part: with the load part's N records loaded into `dx serve` (its own process), the
// whole dataset read back page by page as a client would (records:retrieve is the exports part's).
import { cpuWhile, type CpuSpent } from './lib/cpu.js';
import { createDataset, ENGINE_NAMES, ENGINES, loadFile, startDx, type Dx, type Engine } from './lib/dx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { peakRssWhile } from './lib/procfs.js';
import { LOAD_ROWS, recordFiles } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { cell, median } from './lib/stats.js';

const PAGE_SIZE = 10_000;

export const readsPart: BenchPart = {
  describe: `every page of ${PAGE_SIZE} records in turn, ${LOAD_ROWS} records`,
  run: runReadsBench,
};

/** One read: its time and size, the CPU spent and the service's peak RSS meanwhile. */
interface Read {
  seconds: number;
  bytes: number;
  cpu: CpuSpent;
  peakRssMb: number;
}

const READS = [{ label: `GET records, pages of ${PAGE_SIZE}`, read: pages }];

async function runReadsBench(ctx: BenchContext): Promise<Section[]> {
  ctx.log(`reads: ${LOAD_ROWS} records, ${ctx.runs} runs per engine`);
  const files = await recordFiles(ctx, LOAD_ROWS, 'random');
  const results = new Map<Engine, Read[][]>();
  for (const engine of ENGINES) {
    const dx = await startDx(ctx, engine);
    try {
      const datasetId = await createDataset(dx, 'reads');
      const samples: Read[][] = READS.map(() => []);
      await loadFile(dx, datasetId, files.csv, 'csv', LOAD_ROWS);
      for (let i = 1; i <= ctx.runs; i++) {
        for (const [j, r] of READS.entries()) {
          const [[{ seconds, bytes }, cpu], peakRssMb] = await peakRssWhile(dx.pid, () =>
            cpuWhile([dx.pid], dx.env.pg, () => r.read(dx, datasetId)),
          );
          samples[j]?.push({ seconds, bytes, cpu, peakRssMb });
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
      const pg = s.map((x) => x.cpu.databaseMs);
      rows.push([
        ENGINE_NAMES[engine],
        r.label,
        cell(seconds, 2),
        cell(LOAD_ROWS / seconds),
        cell(median(s.map((x) => x.cpu.processMs)) / 1000, 2),
        pg.some((x) => x === null) ? '–' : cell(median(pg as number[]) / 1000, 2),
        cell(median(s.map((x) => x.bytes)) / 1e6, 1),
        cell(Math.max(...s.map((x) => x.peakRssMb))),
      ]);
    }
  }
  return {
    title: `Record reads, ${LOAD_ROWS.toLocaleString('en')} records`,
    blocks: [
      `The load part's random-key records (CSV) loaded once into \`dx serve --role api,worker\` in its own ` +
        'process; pages are fetched one after another, each parsed. Every read must return all the ' +
        'records (records:retrieve: see the exports part). ' +
        `Median of ${ctx.runs} runs; CPU: user + system seconds of the service process and of the ` +
        "PostgreSQL backends serving it (by application_name); peak RSS: the service process's, the highest of the runs.",
      table(
        [
          'engine',
          'read',
          'seconds',
          'records/s',
          'service CPU s',
          'PostgreSQL CPU s',
          'MB read',
          'service peak RSS MiB',
        ],
        rows,
      ),
    ],
  };
}
