// The worker role's eye on a presigning object store: every S3_POLL_MS it HEADs the objects of the
// jobs awaiting upload and queues those whose file arrived. With several workers each one looks;
// the guarded Created → Queued move (domain/jobs/arrivals.ts) keeps that to one queueing per job.
import type { Kysely } from 'kysely';
import type { Tables } from '../storage/db/tables.js';
import type { ObjectStore } from '../storage/objects/index.js';
import { awaitingUploads, checkUploadArrival } from '../domain/jobs/arrivals.js';
import type { JobNotifier } from '../domain/jobs/notifier.js';
import type { WorkerLog } from './deps.js';

/** Jobs looked at per round; older ones first, so none starves. */
const ROUND_LIMIT = 500;
/** HEAD requests in flight at once. */
const PARALLEL = 8;

export interface UploadWatcherDeps {
  db: Kysely<Tables>;
  objects: ObjectStore;
  notifier: JobNotifier;
  log: WorkerLog;
  pollMs: number;
  maxBytes: number;
}

/** A running watcher; `close()` stops it after the current round. */
export interface UploadWatcher {
  close(): Promise<void>;
}

/** One round: looks for every awaiting job's file; returns how many jobs it queued. */
export async function watchUploadsOnce(
  deps: Omit<UploadWatcherDeps, 'pollMs' | 'notifier'>,
): Promise<number> {
  const jobs = await awaitingUploads(deps.db, ROUND_LIMIT);
  let queued = 0;
  for (let i = 0; i < jobs.length; i += PARALLEL) {
    const outcomes = await Promise.all(
      jobs.slice(i, i + PARALLEL).map(async (job) => {
        try {
          return await checkUploadArrival(deps.db, deps.objects, job, deps.maxBytes);
        } catch (err) {
          deps.log.warn({ err, jobId: job.id }, 'could not look for an upload');
          return 'absent' as const;
        }
      }),
    );
    for (const [j, outcome] of outcomes.entries()) {
      const jobId = jobs[i + j]?.id;
      if (outcome === 'queued') {
        queued++;
        deps.log.info({ jobId }, 'upload arrived; job queued');
      } else if (outcome === 'tooLarge') {
        deps.log.info({ jobId }, 'upload larger than UPLOAD_MAX_BYTES; job failed');
      }
    }
  }
  return queued;
}

/** Starts the polling loop; wakes the in-process worker whenever a job was queued. */
export function startUploadWatcher(deps: UploadWatcherDeps): UploadWatcher {
  const stop = new AbortController();
  const loop = async () => {
    while (!stop.signal.aborted) {
      try {
        if ((await watchUploadsOnce(deps)) > 0) deps.notifier.notify();
      } catch (err) {
        deps.log.error({ err }, 'upload watcher round failed; retrying');
      }
      await sleep(deps.pollMs, stop.signal);
    }
  };
  const running = loop();
  return {
    async close() {
      stop.abort();
      await running;
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
