// What a process tells about its jobs (#13): one structured log line per lifecycle event (the same
// shape whichever role made the move: created and queued by the API, started, completed and failed
// by the worker, expired by its housekeeping; the line names the role and the request that created
// the job) and the job metrics of the shared registry.
import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Role } from '../config.js';
import type { Logger } from '../lib/logger.js';
import { countJobsInState } from '../domain/jobs/counts.js';
import type { JobEvent, JobObserver } from '../domain/jobs/lifecycle.js';
import { recordsWritten } from '../domain/jobs/load/outcome.js';
import type { Tables } from '../storage/db/tables.js';

/** Job durations reach hours (a large file, a slow source): buckets from a second to 2 hours. */
const DURATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200];

/** Which job metrics a process exports: only those of the roles it runs (docs/architecture.md). */
export interface JobMetricsOf {
  /** The counters and durations of the events this process makes (api, worker). */
  events: boolean;
  /** The queued and running gauges, counted in the database for every process (worker only). */
  gauges: boolean;
}

/** Makes the observers that log and count every job event of this process, one per role (its
 * lines carry the role that made the move); registers the metrics `metricsOf` names. */
export function jobSignals(
  registry: Registry,
  logger: Logger | null,
  db: Kysely<Tables>,
  metricsOf: JobMetricsOf,
): (role: Role | null) => JobObserver {
  const count = metricsOf.events ? eventMetrics(registry) : () => undefined;
  if (metricsOf.gauges) stateGauges(registry, db);
  return (role) => {
    const log = logger?.child(role !== null ? { role, component: 'jobs' } : { component: 'jobs' }) ?? null;
    return (e: JobEvent) => {
      const line = jobLine(e);
      count(e, line.durationMs);
      if (log === null) return;
      if (e.event === 'failed') log.warn(line, `job ${e.event}`);
      else log.info(line, `job ${e.event}`);
    };
  };
}

/** The counters and histogram of the job events this process makes; returns what counts one. */
function eventMetrics(registry: Registry): (e: JobEvent, durationMs: number) => void {
  const finished = new Counter({
    name: 'dx_jobs_finished_total',
    help: 'Jobs that reached a final state, by job type and final status',
    labelNames: ['type', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'dx_job_duration_seconds',
    help: 'Time from a job being created to its final state, by job type and final status',
    labelNames: ['type', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const rowsLoaded = new Counter({
    name: 'dx_job_rows_loaded_total',
    help: 'Records written into datasets by completed loads (a replace: every record; an append or upsert: the records it added or replaced; dry runs excluded), by job type',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  return (e, durationMs) => {
    if (e.status !== 'Completed' && e.status !== 'Failed' && e.status !== 'Expired') return;
    const labels = { type: e.job.job_type, status: e.status };
    finished.inc(labels);
    duration.observe(labels, durationMs / 1000);
    if (e.status === 'Completed' && e.job.dry_run !== 1) {
      rowsLoaded.inc({ type: e.job.job_type }, recordsWritten(e.job.mode, e.log));
    }
  };
}

/** The queued and running gauges: read from the database at scrape time, the figure of every
 * process (the same in each process that exports it: aggregate with max, not sum). */
function stateGauges(registry: Registry, db: Kysely<Tables>): void {
  const inState = (name: string, status: 'Queued' | 'Running', help: string) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        try {
          this.set(await countJobsInState(db, status));
        } catch {
          // The database is unreachable or closing: /readyz says so; the scrape goes on.
        }
      },
    });
  inState('dx_jobs_queued', 'Queued', 'Jobs waiting for a worker (all processes)');
  inState('dx_jobs_running', 'Running', 'Jobs a worker is running (all processes)');
}

/** The fields of a job's log line; the same for every event. */
export function jobLine(e: JobEvent) {
  const { job, log, error } = e;
  const created = Date.parse(`${job.created_at}Z`);
  const first = error?.errors[0];
  return {
    event: `job.${e.event}`,
    jobId: job.id,
    datasetId: job.dataset_id,
    installationId: job.installation_id,
    workspaceId: job.workspace_id,
    jobType: job.job_type,
    mode: job.mode,
    dryRun: job.dry_run === 1,
    // Where a recordsLoad job's file comes from, without its secrets (never job.source_url).
    source: job.source_shown,
    status: e.status,
    attempt: job.attempts,
    durationMs: Number.isFinite(created) ? Math.max(0, Date.now() - created) : 0,
    rowsRead: log.rowsRead ?? job.progress_rows ?? null,
    rowsLoaded: log.rowsLoaded ?? null,
    rowsRejected: log.rowsRejected ?? null,
    errorCount: error?.errorCount ?? 0,
    // Cut: a defect's message may quote the file's content.
    firstError: first === undefined ? null : { ...first, message: first.message.slice(0, 200) },
    message: log.message,
    // The API request that created the job: joins its lines with that request's access line.
    requestId: job.request_id,
  };
}
