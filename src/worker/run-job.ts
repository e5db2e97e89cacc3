// Runs one claimed job to its end: Completed (committed with the records), Failed (with its
// defects), or released to Queued at shutdown. A heartbeat renews the lease; losing it stops the job.
import type { DatasetJobRow } from '../storage/db/tables.js';
import { renewLease } from '../domain/jobs/claims.js';
import { DatasetChangedMeanwhile, JobFailure, LeaseLostOnCommit } from '../domain/jobs/load/failure.js';
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
  };

  const controller = new AbortController();
  const onStop = () => controller.abort(input.signal.reason);
  input.signal.addEventListener('abort', onStop, { once: true });
  const heartbeat = setInterval(
    () => {
      renewLease(deps.db, job.id, owner, input.config.jobLeaseMs).then(
        (ours) => {
          if (!ours) controller.abort(new JobStopped('leaseLost'));
        },
        (err: unknown) => log.warn({ err, jobId: job.id }, 'lease renewal failed'),
      );
    },
    Math.max(100, Math.floor(input.config.jobLeaseMs / 3)),
  );

  try {
    const done = await loadJob(deps, job, owner, controller.signal);
    log.info({ jobId: job.id, datasetId: job.dataset_id, ...done }, 'job completed');
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
      if (!(err instanceof JobFailure)) log.error({ err, jobId: job.id }, 'job failed unexpectedly');
      await failJob(
        deps,
        job,
        owner,
        err instanceof JobFailure ? err : new JobFailure('An internal error stopped the load.'),
      );
    }
  } finally {
    clearInterval(heartbeat);
    input.signal.removeEventListener('abort', onStop);
  }
}
