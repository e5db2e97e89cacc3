// Wakes an in-process worker as soon as the API queues a job, so it need not wait for its poll.

/** A wake-up signal between the API and the worker of one process. */
export class JobNotifier {
  private waiters = new Set<() => void>();

  /** Wakes every waiting worker. */
  notify(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolves on notify(), after `ms`, or when `signal` aborts, whichever comes first. */
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
