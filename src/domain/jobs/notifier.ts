// Wakes workers as soon as a job is queued, so they need not wait for their poll: those of this
// process directly, those of other processes through `publish` (PostgreSQL's NOTIFY, set by the
// composition root; storage/db/job-wakeups.ts).

/** A wake-up signal between the roles of one process, and on to other processes. */
export class JobNotifier {
  private waiters = new Set<() => void>();

  /** `publish` tells other processes; its failure only costs them a poll's wait. */
  constructor(private readonly publish: (() => Promise<void>) | null = null) {}

  /** A job was queued (or a delivery is due): wakes the waiting workers here and elsewhere. */
  notify(): void {
    this.wakeLocal();
    this.publish?.().catch(() => undefined);
  }

  /** Wakes this process's waiting workers only (a job ended here; another process said so). */
  wakeLocal(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolves on a wake-up, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}
