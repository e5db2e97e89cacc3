// Runs one claimed job to its end: Completed (committed with the records), Failed (with its
// defects), or released to Queued at shutdown. A heartbeat renews the lease; losing it stops the job.
import type { Readable } from 'node:stream';
import type { DatasetJobRow } from '../storage/db/tables.js';
import { appendStatus, transitionJob } from '../domain/jobs/jobs.js';
import type { JobType } from '../domain/jobs/status.js';
import { renewLease } from './claim.js';
import { LeaseLostOnCommit } from './commit.js';
import { JobFailure, JobStopped } from './failure.js';
import { loadRecords } from './load-records.js';
import type { JobTypeModule } from './jobs/job-type.js';
import { recordsLoadJob } from './jobs/records-load.js';
import { uploadJob } from './jobs/upload.js';
import type { WorkerDeps } from './worker.js';

/** A job interrupted this many times (crashes, lost leases) fails instead of running again. */
export const MAX_ATTEMPTS = 3;

export interface RunJobInput extends WorkerDeps {
  job: DatasetJobRow;
  owner: string;
  signal: AbortSignal;
}

function moduleOf(type: JobType): JobTypeModule {
  switch (type) {
    case 'uploadUrl':
      return uploadJob;
    case 'recordsLoad':
      return recordsLoadJob;
  }
}

/** Runs a job this worker has just claimed. */
export async function runJob(input: RunJobInput): Promise<void> {
  const { job, owner, log } = input;
  const db = input.database.db;
  const module = moduleOf(job.job_type as JobType);
  const fail = async (failure: JobFailure) => {
    // Only the worker that still holds the lease ends the job and deletes its file: a worker whose
    // lease lapsed must not take the upload away from the one now running the job.
    const ended = await transitionJob(db, job.id, {
      to: 'Failed',
      from: ['Running'],
      leaseOwner: owner,
      log: { message: failure.message },
      error: failure.errorData ?? { errorCount: 0, errors: [] },
      clearLease: true,
    });
    if (ended) await module.cleanup({ job, config: input.config, objects: input.objects });
  };
  if (job.attempts > MAX_ATTEMPTS) {
    return fail(new JobFailure(`The job was interrupted ${MAX_ATTEMPTS} times; giving up.`));
  }
  await appendStatus(
    db,
    job.id,
    'Running',
    {
      message:
        job.attempts > 1 ? `Running again from scratch (attempt ${job.attempts}).` : 'Loading records.',
    },
    null,
  );

  const controller = new AbortController();
  const onStop = () => controller.abort(input.signal.reason);
  input.signal.addEventListener('abort', onStop, { once: true });
  const heartbeat = setInterval(
    () => {
      renewLease(db, job.id, owner, input.config.jobLeaseMs).then(
        (ours) => {
          if (!ours) controller.abort(new JobStopped('leaseLost'));
        },
        (err: unknown) => log.warn({ err, jobId: job.id }, 'lease renewal failed'),
      );
    },
    Math.max(100, Math.floor(input.config.jobLeaseMs / 3)),
  );

  let body: Readable | null = null;
  try {
    const source = await module.open({
      job,
      config: input.config,
      objects: input.objects,
      signal: controller.signal,
    });
    body = source.body;
    // The body can fail before the parser reads it (the job stopped while its table was being
    // made): that must end this job, not the process. The parser still sees the error.
    body.on('error', () => undefined);
    const done = await loadRecords(
      { db, records: input.records, job, leaseOwner: owner, signal: controller.signal },
      source.body,
      source.format,
    );
    log.info({ jobId: job.id, datasetId: job.dataset_id, ...done }, 'job completed');
    await module.cleanup({ job, config: input.config, objects: input.objects });
  } catch (err) {
    const stopped: unknown = controller.signal.aborted ? controller.signal.reason : null;
    if (
      err instanceof LeaseLostOnCommit ||
      (stopped instanceof JobStopped && stopped.reason === 'leaseLost')
    ) {
      log.warn({ jobId: job.id }, 'job lease lost; another worker re-runs it');
    } else if (stopped instanceof JobStopped && stopped.reason === 'shutdown') {
      await transitionJob(db, job.id, {
        to: 'Queued',
        from: ['Running'],
        leaseOwner: owner,
        log: { message: 'Released at worker shutdown; it will run again from scratch.' },
        clearLease: true,
      });
      log.info({ jobId: job.id }, 'job released at shutdown');
    } else {
      if (!(err instanceof JobFailure)) log.error({ err, jobId: job.id }, 'job failed unexpectedly');
      await fail(err instanceof JobFailure ? err : new JobFailure('An internal error stopped the load.'));
    }
  } finally {
    clearInterval(heartbeat);
    input.signal.removeEventListener('abort', onStop);
    body?.destroy();
  }
}
