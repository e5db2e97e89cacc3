// The worker role: claims jobs with a lease, keeps the lease alive with a heartbeat while the job
// runs, and ends each job Completed, Failed, or (at shutdown) released back to Queued. A job whose
// worker died is claimed again once its lease lapses and re-run from scratch. It also sends the
// apps' webhook deliveries (webhooks.ts).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DatasetJobRow } from '../storage/db/tables.js';
import { claimJob } from '../domain/jobs/claims.js';
import type { WorkerDeps } from './deps.js';
import { JobStopped } from './job-stopped.js';
import { runJob } from './run-job.js';
import { sweep } from './sweep.js';
import { startWebhookDeliverer } from './webhooks.js';

const SWEEP_EVERY_MS = 30_000;

/** A running worker; `close()` stops claiming and finishes or releases its jobs. */
export interface Worker {
  readonly owner: string;
  /** Stops claiming jobs and webhook deliveries (shutdown has begun); those under way go on. */
  drain(): void;
  close(graceMs?: number): Promise<void>;
}

/** Starts the claim loop with WORKER_CONCURRENCY slots. */
export function startWorker(deps: WorkerDeps): Worker {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const stop = new AbortController();
  const running = new Map<string, { promise: Promise<void>; controller: AbortController }>();
  const db = deps.database.db;
  const claim = {
    owner,
    leaseMs: deps.config.jobLeaseMs,
    skipLocked: deps.database.capabilities.skipLocked,
  };
  let lastSweep = 0;

  const loop = async () => {
    while (!stop.signal.aborted) {
      try {
        if (Date.now() - lastSweep > SWEEP_EVERY_MS) {
          lastSweep = Date.now();
          await sweep({
            db,
            objects: deps.objects,
            records: deps.records,
            changesRetentionMs: deps.config.changesRetentionMs,
          });
        }
        let claimed: DatasetJobRow | undefined;
        while (running.size < deps.config.workerConcurrency && !stop.signal.aborted) {
          claimed = await claimJob({ db, objects: deps.objects }, claim);
          if (claimed === undefined) break;
          start(claimed);
        }
      } catch (err) {
        deps.log.error({ err }, 'worker loop failed; retrying');
      }
      await deps.notifier.wait(deps.config.workerPollMs, stop.signal);
    }
  };

  const start = (job: DatasetJobRow) => {
    const controller = new AbortController();
    const promise = runJob({ ...deps, job, owner, signal: controller.signal })
      .catch((err: unknown) => deps.log.error({ err, jobId: job.id }, 'job runner failed'))
      .finally(() => {
        running.delete(job.id);
        deps.notifier.wakeLocal();
      });
    running.set(job.id, { promise, controller });
  };

  const looping = loop();
  const webhooks = startWebhookDeliverer(deps, owner);
  let webhooksClosed: Promise<void> | null = null;
  const drain = () => {
    stop.abort();
    webhooksClosed ??= webhooks.close();
  };
  return {
    owner,
    drain,
    async close(graceMs = deps.config.shutdownGraceMs) {
      drain();
      await Promise.all([looping, webhooksClosed]);
      const all = () => Promise.all([...running.values()].map((r) => r.promise));
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([
        all().then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
      ]);
      clearTimeout(timer);
      if (!inTime) {
        for (const r of running.values()) r.controller.abort(new JobStopped('shutdown'));
        await all();
      }
    },
  };
}
