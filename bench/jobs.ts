// The `jobs` part: job throughput and the fixed cost of a job, with the roles apart as operators run
// them at scale: `dx serve --role api` in one process and `--role worker` processes (one, then
// two) on the same database and data folder. BENCH_JOBS loads of BENCH_JOB_ROWS random-key rows,
// one per dataset, are all queued before the workers start; then tiny loads (one record) one after
// another show what a job costs beyond its data, phase by phase, from the job's own timestamps.
// The app has a webhook (a receiver in this process), so every job's commit writes a delivery to
// the outbox and a worker sends it, as for partners who use webhooks.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpuWhile, type CpuSpent } from './lib/cpu.js';
import {
  createDataset,
  createEnv,
  dxClient,
  ENGINE_NAMES,
  loadFile,
  spawnDx,
  uploadFile,
  waitForJob,
  type DxClient,
  type DxProcess,
  type Engine,
} from './lib/dx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { generate, PROPERTIES } from './lib/records.js';
import { table, type Section } from './lib/report.js';
import { cpuMs } from './lib/procfs.js';
import { cell, median } from './lib/stats.js';

/** Loads queued at once (BENCH_JOBS) and the rows of each (BENCH_JOB_ROWS). */
const JOBS = Number(process.env.BENCH_JOBS ?? 20);
const JOB_ROWS = Number(process.env.BENCH_JOB_ROWS ?? 50_000);
/** Tiny loads (one record each) per configuration and run, one after another. */
const TINY_LOADS = 5;
/** The configurations, in the order each run measures them. */
const CONFIGS: readonly { engine: Engine; workers: number }[] = [
  { engine: 'postgres', workers: 1 },
  { engine: 'postgres', workers: 2 },
  { engine: 'sqlite', workers: 1 },
];
/** How long a webhook may take to arrive before the bench gives up waiting for it. */
const WEBHOOK_WAIT_MS = 15_000;

export const jobsPart: BenchPart = {
  describe: `${JOBS} queued loads of ${JOB_ROWS} rows with 1 and 2 worker processes (jobs/min), and the fixed cost of a job`,
  run: runJobsBench,
};

/** A job's instants (epoch ms) as its status entries, its progress and its webhook tell them. */
interface JobTimes {
  jobId: string;
  created: number;
  queued: number;
  running: number;
  /** When the worker last stored the job's figures: for a job shorter than a heartbeat (1 s), the
   * moment the whole file had been read and written to the staging table. */
  progressAt: number;
  completed: number;
  /** When the webhook arrived at the receiver (NaN if it did not within WEBHOOK_WAIT_MS). */
  webhook: number;
}

/** A batch of JOBS loads: its span and CPU, and each job's instants. */
interface Batch {
  /** From the first claim to the last commit, in seconds (the jobs' own timestamps). */
  spanSeconds: number;
  /** From letting the workers go to the last Completed seen by polling. */
  wallSeconds: number;
  /** CPU of the worker processes and of the api (which answers the polls), and their backends. */
  workersCpu: CpuSpent;
  apiCpuMs: number;
  jobs: JobTimes[];
  /** Per worker: the jobs it ran, by its log. */
  perWorker: string[][];
}

interface ConfigRuns {
  engine: Engine;
  workers: number;
  batches: Batch[];
  tiny: { clientSeconds: number; times: JobTimes }[];
}

/** Receives webhooks; remembers when each job's first arrived. */
class Receiver {
  private constructor(
    private readonly server: Server,
    readonly arrived: Map<string, number>,
  ) {}

  static async start(): Promise<Receiver> {
    const arrived = new Map<string, number>();
    const server = createServer((req, res) => {
      const at = Date.now();
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        try {
          const id = (JSON.parse(body) as { job?: { datasetJobId?: string } }).job?.datasetJobId;
          if (id !== undefined && !arrived.has(id)) arrived.set(id, at);
        } catch {
          // Not a delivery: ignored.
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Receiver(server, arrived);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async waitFor(jobIds: readonly string[]): Promise<void> {
    const until = Date.now() + WEBHOOK_WAIT_MS;
    while (jobIds.some((id) => !this.arrived.has(id)) && Date.now() < until) await sleep(20);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface StatusEntry {
  status: string;
  dateCreated: string;
}

/** The service's timestamps (UTC, no zone suffix) as epoch ms. */
const instant = (stamp: string) => Date.parse(`${stamp}Z`);

/** A job's instants from GET …/logs and GET …/:id, and the receiver's arrival. */
async function jobTimes(api: DxClient, jobId: string, receiver: Receiver): Promise<JobTimes> {
  const logs = await api.call<{ data: StatusEntry[] }>('GET', `/datasets/jobs/${jobId}/logs`);
  const job = await api.call<{ progress: { updatedAt: string } | null }>('GET', `/datasets/jobs/${jobId}`);
  const at = (status: string) => {
    const entry = logs.data.filter((e) => e.status === status).at(-1);
    return entry === undefined ? NaN : instant(entry.dateCreated);
  };
  return {
    jobId,
    created: at('Created'),
    queued: at('Queued'),
    running: at('Running'),
    progressAt: job.progress === null ? NaN : instant(job.progress.updatedAt),
    completed: at('Completed'),
    webhook: receiver.arrived.get(jobId) ?? NaN,
  };
}

/** The jobs each worker process ran, from the "job started" lines of its log. */
function jobsOfWorkers(logFiles: readonly string[]): string[][] {
  return logFiles.map((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"event":"job.started"'))
      .map((line) => (JSON.parse(line) as { jobId: string }).jobId),
  );
}

async function runJobsBench(ctx: BenchContext): Promise<Section[]> {
  const file = join(ctx.tmp, `jobs-${JOB_ROWS}-random.csv`);
  const tinyFile = join(ctx.tmp, 'jobs-tiny.csv');
  await generate(file, JOB_ROWS, 'csv', 'random');
  writeFileSync(
    tinyFile,
    `${PROPERTIES.map((p) => p[0]).join(',')}\n1,Person 1,person1@example.org,19,0.14,false,Lagos,1951-02-02\n`,
  );
  const receiver = await Receiver.start();
  const results: ConfigRuns[] = CONFIGS.map((c) => ({ ...c, batches: [], tiny: [] }));
  try {
    for (let run = 1; run <= ctx.runs; run++) {
      for (const r of results) {
        ctx.log(`jobs: run ${run}, ${ENGINE_NAMES[r.engine]}, ${r.workers} worker(s)`);
        await measureConfig(ctx, r, receiver, file, tinyFile);
      }
    }
  } finally {
    await receiver.close();
  }
  return [jobsSection(ctx, results)];
}

/** One configuration once: a fresh environment, the batch, then the tiny loads. */
async function measureConfig(
  ctx: BenchContext,
  r: ConfigRuns,
  receiver: Receiver,
  file: string,
  tinyFile: string,
): Promise<void> {
  const env = await createEnv(ctx, r.engine);
  // The receiver listens on loopback, which webhooks may reach only when allowed.
  const settings = { WEBHOOK_URL_ALLOWLIST: '127.0.0.1', LOG_LEVEL: 'info' };
  let api: DxProcess | null = null;
  const workers: DxProcess[] = [];
  try {
    api = await spawnDx(ctx, env, 'api', settings);
    const client = dxClient(api.url, env.credentials.token);
    await client.call('PUT', '/apps/me/webhook', { url: receiver.url }, env.credentials.jwt);
    // The workers start idle and are held (SIGSTOP) while the batch is queued, then let go together:
    // every job is queued before any is claimed, and their start-up is not measured.
    for (let i = 0; i < r.workers; i++) workers.push(await spawnDx(ctx, env, 'worker', settings));
    for (const w of workers) w.signal('SIGSTOP');
    const jobIds: string[] = [];
    for (let i = 1; i <= JOBS; i++) {
      const datasetId = await createDataset(client, `batch ${i}`);
      jobIds.push((await uploadFile(client, datasetId, file, 'csv')).jobId);
    }
    const apiCpu0 = cpuMs(api.pid);
    const started = performance.now();
    const [, workersCpu] = await cpuWhile(
      workers.map((w) => w.pid),
      env.pg,
      async () => {
        for (const w of workers) w.signal('SIGCONT');
        for (const id of jobIds) await waitForJob(client, id, JOB_ROWS, 100);
      },
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const apiCpuMs = cpuMs(api.pid) - apiCpu0;
    await receiver.waitFor(jobIds);
    const jobs = await Promise.all(jobIds.map((id) => jobTimes(client, id, receiver)));
    const spanSeconds =
      (Math.max(...jobs.map((j) => j.completed)) - Math.min(...jobs.map((j) => j.running))) / 1000;
    r.batches.push({
      spanSeconds,
      wallSeconds,
      workersCpu,
      apiCpuMs,
      jobs,
      perWorker: jobsOfWorkers(workers.map((w) => w.logFile)),
    });
    ctx.log(
      `  ${JOBS} jobs in ${spanSeconds.toFixed(2)} s (${((JOBS / spanSeconds) * 60).toFixed(0)} jobs/min)`,
    );
    // The fixed cost: one-record loads, one after another, each polled every 10 ms.
    const tinyDataset = await createDataset(client, 'tiny');
    for (let i = 0; i < TINY_LOADS; i++) {
      const t = await loadFile(client, tinyDataset, tinyFile, 'csv', 1, 10);
      await receiver.waitFor([t.jobId]);
      r.tiny.push({ clientSeconds: t.seconds, times: await jobTimes(client, t.jobId, receiver) });
    }
    ctx.log(`  tiny load: ${median(r.tiny.map((t) => t.clientSeconds)).toFixed(3)} s (median so far)`);
  } finally {
    for (const w of workers) await w.close();
    await api?.close();
    await env.cleanup();
  }
}

/** The median of `values` without the NaNs (missing instants). */
function medianOf(values: readonly number[]): number {
  return median(values.filter((v) => Number.isFinite(v)));
}

/** The pauses between one worker's jobs: its next claim after its previous commit, in ms. */
function gapsBetweenJobs(batch: Batch): number[] {
  const byId = new Map(batch.jobs.map((j) => [j.jobId, j]));
  const gaps: number[] = [];
  for (const ids of batch.perWorker) {
    const mine = ids
      .map((id) => byId.get(id))
      .filter((j): j is JobTimes => j !== undefined)
      .sort((a, b) => a.running - b.running);
    for (let k = 1; k < mine.length; k++) {
      gaps.push((mine[k] as JobTimes).running - (mine[k - 1] as JobTimes).completed);
    }
  }
  return gaps;
}

function jobsSection(ctx: BenchContext, results: readonly ConfigRuns[]): Section {
  const throughput = results.map((r) => {
    const b = r.batches;
    const span = median(b.map((x) => x.spanSeconds));
    const jobs = b.flatMap((x) => x.jobs);
    const pg = b.map((x) => x.workersCpu.databaseMs);
    const workersCpu = median(b.map((x) => x.workersCpu.processMs));
    const pgCpu = pg.some((x) => x === null) ? NaN : median(pg as number[]);
    return [
      ENGINE_NAMES[r.engine],
      String(r.workers),
      cell(span, 2),
      cell((JOBS / span) * 60),
      cell((JOBS * JOB_ROWS) / span),
      cell(median(b.map((x) => x.wallSeconds)), 2),
      cell(medianOf(jobs.map((j) => j.completed - j.running)) / 1000, 2),
      cell(medianOf(b.flatMap(gapsBetweenJobs))),
      cell(workersCpu / 1000, 2),
      r.engine === 'postgres' ? cell(pgCpu / 1000, 2) : '–',
      cell(median(b.map((x) => x.apiCpuMs)) / 1000, 2),
      cell((workersCpu + (Number.isFinite(pgCpu) ? pgCpu : 0)) / JOBS),
      cell(medianOf(jobs.map((j) => j.webhook - j.completed))),
    ];
  });
  const fixed = results.map((r) => {
    const t = r.tiny.map((x) => x.times);
    return [
      ENGINE_NAMES[r.engine],
      String(r.workers),
      cell(median(r.tiny.map((x) => x.clientSeconds)) * 1000),
      cell(medianOf(t.map((j) => j.queued - j.created))),
      cell(medianOf(t.map((j) => j.running - j.queued))),
      cell(medianOf(t.map((j) => j.progressAt - j.running))),
      cell(medianOf(t.map((j) => j.completed - j.progressAt))),
      cell(medianOf(t.map((j) => j.completed - j.running))),
      cell(medianOf(t.map((j) => j.webhook - j.completed))),
    ];
  });
  return {
    title: `Job throughput, ${JOBS} loads of ${JOB_ROWS.toLocaleString('en')} rows`,
    blocks: [
      '`dx serve --role api` in one process and `--role worker` processes (WORKER_CONCURRENCY=1 each, ' +
        'WORKER_POLL_MS at its default of 250 ms) on a fresh PostgreSQL schema or SQLite file, sharing the ' +
        'data folder (the embedded object store). The app has a webhook pointing at a receiver in the bench, ' +
        'so every commit writes a delivery to the outbox and a worker sends it. ' +
        `Batch: ${JOBS} datasets, each given one upload (CSV, ${JOB_ROWS.toLocaleString('en')} rows, the keys ` +
        'in the fixed-seed random order, mode=replace), all queued while the started workers are held ' +
        '(SIGSTOP), then the workers let go together (SIGCONT), so their start-up is not measured: one load per ' +
        'dataset, as partners load their lists, since loads of one dataset run one at a time by design ' +
        '(appends to one dataset would measure that queue and the copy of its records, not the workers). ' +
        '"Span": from the first claim to the last commit, by the jobs\' own status timestamps; "wall": ' +
        'from letting the workers go to the last Completed seen by polling every 100 ms. "Gap": from a ' +
        "worker's commit to its next claim (by its log's job.started lines): the upload's deletion and the " +
        `claim. CPU: user + system of the worker processes and of the api (answering the polls) over the ` +
        'batch, and of the PostgreSQL backends of all of them (by application_name); "CPU ms per job": ' +
        "the workers' and PostgreSQL's CPU divided by the jobs. Webhook: from the " +
        `commit to the delivery's arrival. Median of ${ctx.runs} runs, configurations interleaved.`,
      table(
        [
          'engine',
          'workers',
          'span s',
          'jobs / min',
          'rows/s',
          'wall s',
          'job s (claim → commit)',
          'gap between jobs ms',
          'workers CPU s',
          'PostgreSQL CPU s',
          'api CPU s',
          'CPU ms per job',
          'webhook after commit ms',
        ],
        throughput,
      ),
      `**The fixed cost of a job**: ${TINY_LOADS} loads of a one-record CSV per run, one after another, ` +
        'with the same processes after the batch; the client polls every 10 ms. The phases come from the ' +
        "job's status entries (Created: the uploadUrl call; Queued: the file stored; Running: claimed; " +
        'Completed: the commit, which writes the outbox row in the same transaction) and from its ' +
        'progress figures, which the worker stores once the whole file has been read and written to the ' +
        'staging table. Not observable from outside, so not split here: creating the staging table ' +
        '(inside "read, parse, write"), building the key and the commit itself (together in "key + ' +
        'commit"), and deleting the upload after the commit (in the gap above). "Waiting for a worker": ' +
        'from the file stored to the claim; a queued job wakes the workers of other processes at once ' +
        "(PostgreSQL's NOTIFY, a watched file beside an SQLite database), their poll is the fallback.",
      table(
        [
          'engine',
          'workers',
          'end to end ms (client)',
          'upload ms',
          'waiting for a worker ms',
          'open, read, parse, write ms',
          'key + commit ms',
          'claim → commit ms',
          'webhook after commit ms',
        ],
        fixed,
      ),
    ],
  };
}
