// Runs one claimed job to its end: Completed (committed with the records), Failed (with its
// defects), or released to Queued at shutdown. A heartbeat renews the lease and stores the load's
// progress in the same UPDATE, about every second; losing the lease stops the job.
import type { DatasetJobRow } from '../storage/db/tables.js';
import { loadHeapGrowth } from '../lib/heap-growth.js';
import { renewLease } from '../domain/jobs/claims.js';
import { DatasetChangedMeanwhile, JobFailure, LeaseLostOnCommit } from '../domain/jobs/load/failure.js';
import { LoadProgress } from '../domain/jobs/load/progress.js';
import { cleanupJob, failJob, loadJob, releaseJob } from '../domain/jobs/load/run-load.js';
import type { WorkerDeps } from './deps.js';
import { JobStopped } from './job-stopped.js';

export interface RunJobInput extends WorkerDeps {
  job: DatasetJobRow;
  owner: string;
  signal: AbortSignal;
}

/** Runs a job this worker has just claimed. */
export async function runJob(input: RunJobInput): Promise<void> {
  const { job, owner, log } = input;
  const deps = {
    config: input.config,
    db: input.database.db,
    objects: input.objects,
    records: input.records,
    signingSecret: input.signingSecret,
  };

  const controller = new AbortController();
  const onStop = () => controller.abort(input.signal.reason);
  input.signal.addEventListener('abort', onStop, { once: true });
  // Beats run one after another, each storing the figures of the moment it starts, so a slow
  // write never lands after a later one; the timer skips its beat while one is still under way.
  let beats = Promise.resolve();
  let pending = 0;
  const beat = (): Promise<void> => {
    pending++;
    beats = beats
      .then(() => renewLease(deps.db, job.id, owner, input.config.jobLeaseMs, progress.figures()))
      .then(
        (ours) => {
          if (!ours) controller.abort(new JobStopped('leaseLost'));
        },
        (err: unknown) => log.warn({ err, jobId: job.id }, 'lease renewal failed'),
      )
      .finally(() => pending--);
    return beats;
  };
  // Told once the file is open (its size known) and once it is read, so the first figures stored
  // have the file's total and the final ones are stored before the job ends. The claim cleared
  // what an earlier attempt left.
  const progress = new LoadProgress(beat);
  const heartbeat = setInterval(() => {
    if (pending === 0) void beat();
  }, heartbeatMs(input.config.jobLeaseMs));

  // Where a recordsLoad job's file comes from, without its secrets (never job.source_url).
  const source = job.source_shown !== null ? { source: job.source_shown } : {};
  try {
    // Its "job completed" line is the lifecycle's (runtime/job-signals.ts), written at the commit.
    await loadHeapGrowth.run(() => loadJob(deps, job, owner, controller.signal, progress));
    await cleanupJob(deps, job);
  } catch (err) {
    const stopped: unknown = controller.signal.aborted ? controller.signal.reason : null;
    if (
      err instanceof LeaseLostOnCommit ||
      (stopped instanceof JobStopped && stopped.reason === 'leaseLost')
    ) {
      log.warn({ jobId: job.id }, 'job lease lost; another worker re-runs it');
    } else if (stopped instanceof JobStopped && stopped.reason === 'shutdown') {
      await releaseJob(deps.db, job.id, owner);
      log.info({ jobId: job.id }, 'job released at shutdown');
    } else if (err instanceof DatasetChangedMeanwhile) {
      await releaseJob(deps.db, job.id, owner, 'datasetChanged');
      log.info({ jobId: job.id }, 'job released: the records it built on changed');
    } else {
      if (!(err instanceof JobFailure))
        log.error({ err, jobId: job.id, ...source }, 'job failed unexpectedly');
      await beat(); // the figures where the load stopped stay with the failed job
      await failJob(
        deps,
        job,
        owner,
        err instanceof JobFailure ? err : new JobFailure('An internal error stopped the load.'),
      );
    }
  } finally {
    clearInterval(heartbeat);
    await beats; // no write of this job outlives it
    input.signal.removeEventListener('abort', onStop);
  }
}

/** Progress is stored about every second (a client's bar moves smoothly); the lease is renewed at
 * least every third of its time, so a short lease beats faster. */
export const PROGRESS_EVERY_MS = 1000;

function heartbeatMs(leaseMs: number): number {
  return Math.max(100, Math.min(PROGRESS_EVERY_MS, Math.floor(leaseMs / 3)));
}
