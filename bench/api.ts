// API part: the calls partners make all day, at BENCH_API_CONNECTIONS connections, on SQLite and
// on PostgreSQL side by side, each served by `dx serve --role api` in its own process: the dataset
// list (five datasets), a completed load job's current status, a page of 100 records, and token
// minting, beside GET /healthz as the floor of the framework stack (routing, hooks, logging,
// serialisation). The data is made through the API first (by a `--role api,worker` process on the
// same database, stopped before measuring), so the job and the records are real.
import { join } from 'node:path';
import { cpuWhile } from './lib/cpu.js';
import {
  createDataset,
  createEnv,
  dxClient,
  ENGINE_NAMES,
  ENGINES,
  loadFile,
  spawnDx,
  type DxEnv,
  type DxProcess,
  type Engine,
} from './lib/dx.js';
import { runLoad, type LoadSpec } from './lib/load.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { generate } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { cell, median, ratio } from './lib/stats.js';

const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 64);
const DATASETS = 5;
/** Records of the dataset whose first page is read (BENCH_API_RECORDS). */
const RECORDS = Number(process.env.BENCH_API_RECORDS ?? 10_000);
const PAGE_SIZE = 100;
/** Targets: each endpoint's requests/s ÷ /healthz's, and its p99 ÷ its own p50. */
const MIN_FLOOR_RATIO = 0.5;
const MAX_TAIL_RATIO = 4;

/** The API part of the suite. */
export const apiPart: BenchPart = {
  usesLoadTool: true,
  describe: `API on SQLite and PostgreSQL at ${CONNECTIONS} connections: datasets, job status, records page, token mint vs GET /healthz`,
  run: runApiBench,
};

interface Endpoint {
  label: string;
  spec: Omit<LoadSpec, 'connections' | 'seconds'>;
  /** Writes a row per request: measured last in each run, its rows deleted afterwards. */
  writes?: boolean;
}

/** One engine's service under measurement. */
interface Target {
  engine: Engine;
  env: DxEnv;
  api: DxProcess;
  endpoints: Endpoint[];
  /** Access tokens created after this instant are the mint's; they are deleted after each mint run. */
  seededAt: string;
  samples: Sample[][];
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** CPU ms per 1000 requests: the service process's, and PostgreSQL's backends' (null on SQLite). */
  cpu: number;
  pgCpu: number | null;
  bad: number;
}

/**
 * Makes the part's data through the API of a `--role api,worker` process: four empty datasets and
 * one loaded with RECORDS records (random keys) by an upload job, which is left Completed.
 */
async function seed(ctx: BenchContext, env: DxEnv): Promise<{ datasetId: string; jobId: string }> {
  const file = join(ctx.tmp, `api-records-${RECORDS}.csv`);
  await generate(file, RECORDS, 'csv', 'random');
  const seeder = await spawnDx(ctx, env, 'api,worker');
  try {
    const client = dxClient(seeder.url, env.credentials.token);
    for (let i = 1; i < DATASETS; i++) await createDataset(client, `Contacts ${i}`);
    const datasetId = await createDataset(client, `Contacts ${DATASETS}`);
    const { jobId } = await loadFile(client, datasetId, file, 'csv', RECORDS);
    return { datasetId, jobId };
  } finally {
    await seeder.close();
  }
}

async function prepare(ctx: BenchContext, engine: Engine): Promise<Target> {
  const env = await createEnv(ctx, engine);
  try {
    const { datasetId, jobId } = await seed(ctx, env);
    const seededAt = (await env.sql('select max(created_at) from access_tokens')).trim();
    // The access log on (to a file), as in production.
    const api = await spawnDx(ctx, env, 'api', { LOG_LEVEL: 'info' });
    const auth = { authorization: `Bearer ${env.credentials.token}` };
    const endpoints: Endpoint[] = [
      { label: 'GET /healthz (floor)', spec: { url: `${api.url}/healthz` } },
      {
        label: `GET /api/v1/datasets (${DATASETS} datasets)`,
        spec: { url: `${api.url}/api/v1/datasets`, headers: auth },
      },
      {
        label: 'GET /api/v1/datasets/jobs/:id/logs:current (Completed)',
        spec: { url: `${api.url}/api/v1/datasets/jobs/${jobId}/logs:current`, headers: auth },
      },
      {
        label: `GET /api/v1/datasets/:id/records?pageSize=${PAGE_SIZE} (${RECORDS.toLocaleString('en')} records)`,
        spec: { url: `${api.url}/api/v1/datasets/${datasetId}/records?pageSize=${PAGE_SIZE}`, headers: auth },
      },
      {
        label: 'POST /api/v1/auth/clientToken',
        writes: true,
        spec: {
          url: `${api.url}/api/v1/auth/clientToken`,
          method: 'POST',
          body: env.credentials.mintBody,
          headers: { authorization: `Bearer ${env.credentials.jwt}`, 'content-type': 'application/json' },
        },
      },
    ];
    return { engine, env, api, endpoints, seededAt, samples: endpoints.map(() => []) };
  } catch (err) {
    await env.cleanup().catch(() => undefined);
    throw err;
  }
}

/** Deletes the tokens the mint runs wrote, so every run (and every other endpoint) meets the table
 * as seeded; on PostgreSQL the dead rows are vacuumed away too. */
async function resetTokens(t: Target): Promise<void> {
  await t.env.sql(`delete from access_tokens where created_at > '${t.seededAt}'`);
  if (t.engine === 'postgres') await t.env.sql('vacuum access_tokens');
}

async function measure(ctx: BenchContext, t: Target, e: Endpoint, warm: boolean): Promise<Sample> {
  const spec = { ...e.spec, connections: CONNECTIONS, seconds: ctx.seconds };
  if (warm) {
    await runLoad(ctx.tool, { ...spec, seconds: 1 });
    if (e.writes === true) await resetTokens(t);
  }
  const [r, cpu] = await cpuWhile([t.api.pid], t.env.pg, () => runLoad(ctx.tool, spec));
  if (e.writes === true) await resetTokens(t);
  const perThousand = (ms: number) => (ms / r.requests) * 1000;
  return {
    rps: r.rps,
    p50: r.p50Ms,
    p99: r.p99Ms,
    cpu: perThousand(cpu.processMs),
    pgCpu: cpu.databaseMs === null ? null : perThousand(cpu.databaseMs),
    bad: r.non2xx + r.errors,
  };
}

async function runApiBench(ctx: BenchContext): Promise<Section[]> {
  const targets: Target[] = [];
  try {
    for (const engine of ENGINES) {
      ctx.log(
        `api: seeding ${ENGINE_NAMES[engine]} (${DATASETS} datasets, ${RECORDS} records by a load job)`,
      );
      targets.push(await prepare(ctx, engine));
    }
    for (let run = 0; run < ctx.runs; run++) {
      for (const t of targets) {
        // The reading endpoints in a rotating order; the mint last, its rows deleted after it.
        const reads = t.endpoints.map((e, i) => ({ e, i })).filter(({ e }) => e.writes !== true);
        const shift = run % reads.length;
        const order = [...reads.slice(shift), ...reads.slice(0, shift)];
        order.push(...t.endpoints.map((e, i) => ({ e, i })).filter(({ e }) => e.writes === true));
        for (const { e, i } of order) {
          const s = await measure(ctx, t, e, run === 0);
          t.samples[i]?.push(s);
          ctx.log(
            `  run ${run + 1} ${ENGINE_NAMES[t.engine]} ${e.label}: ${Math.round(s.rps)} req/s, ` +
              `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`,
          );
        }
      }
    }
  } finally {
    for (const t of targets) {
      await t.api.close();
      await t.env.cleanup();
    }
  }
  return [apiSection(ctx, targets)];
}

function apiSection(ctx: BenchContext, targets: readonly Target[]): Section {
  const rows: string[][] = [];
  const checks: string[][] = [];
  for (const t of targets) {
    const name = ENGINE_NAMES[t.engine];
    const m = t.samples.map((s) => {
      const pg = s.map((x) => x.pgCpu);
      return {
        rps: median(s.map((x) => x.rps)),
        p50: median(s.map((x) => x.p50)),
        p99: median(s.map((x) => x.p99)),
        cpu: median(s.map((x) => x.cpu)),
        pgCpu: pg.some((x) => x === null) ? null : median(pg as number[]),
        bad: s.reduce((n, x) => n + x.bad, 0),
      };
    });
    const floor = m[0]?.rps ?? NaN;
    for (const [i, e] of t.endpoints.entries()) {
      const x = m[i] as (typeof m)[number];
      rows.push([
        name,
        e.label,
        cell(x.rps),
        ratio(x.rps, floor),
        cell(x.p50, 2),
        cell(x.p99, 2),
        ratio(x.p99, x.p50),
        cell(x.cpu),
        x.pgCpu === null ? '–' : cell(x.pgCpu),
        String(x.bad),
      ]);
      if (i === 0) continue;
      checks.push([
        `${name}, ${e.label}: ≥ ${MIN_FLOOR_RATIO}× /healthz's req/s`,
        ratio(x.rps, floor),
        x.rps / floor >= MIN_FLOOR_RATIO ? 'yes' : '**no**',
      ]);
      checks.push([
        `${name}, ${e.label}: p99 ≤ ${MAX_TAIL_RATIO}× its p50`,
        ratio(x.p99, x.p50),
        x.p99 / x.p50 <= MAX_TAIL_RATIO ? 'yes' : '**no**',
      ]);
    }
  }
  return {
    title: `API on SQLite and PostgreSQL, ${CONNECTIONS} connections`,
    blocks: [
      '`dx serve --role api` in its own process per engine (a fresh SQLite file, a fresh PostgreSQL schema), ' +
        'with the access log on (LOG_LEVEL=info, to a file). Before measuring, a `--role api,worker` process ' +
        `on the same database made ${DATASETS} datasets through the API and loaded ${RECORDS.toLocaleString('en')} ` +
        'records (random keys, CSV) into one of them: that upload job, Completed, is the one whose ' +
        'current status is read, and that dataset the one whose first page is read. ' +
        `Each point: ${ctx.seconds} s of load from one wrk thread after a 1 s warm-up in the first run; median ` +
        `of ${ctx.runs} runs, the engines and the reading endpoints interleaved in a rotating order. Token ` +
        'minting writes a token row per request: it runs last in each run and its rows are deleted after ' +
        'it (on PostgreSQL the table is vacuumed too), so no other endpoint, and no later mint run, meets ' +
        'a larger table. CPU per 1000 requests: user + system time of the service process, and of the ' +
        "PostgreSQL backends serving the service's connections (found by application_name; the server's " +
        'background processes and other clients are not counted), from /proc over the measured seconds.',
      table(
        [
          'engine',
          'endpoint',
          'req/s',
          '÷ /healthz',
          'p50 ms',
          'p99 ms',
          'p99 ÷ p50',
          'service CPU ms / 1k req',
          'PostgreSQL CPU ms / 1k req',
          'non-2xx + errors',
        ],
        rows,
      ),
      '**Targets** (each endpoint against /healthz of the same engine in this run)',
      table(['target', 'measured', 'holds'], checks),
    ],
  };
}
