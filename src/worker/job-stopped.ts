// Why the worker stopped a running job from outside: the reason it aborts the job's signal with.

/** Why a running job was stopped from outside. */
export type StopReason = 'shutdown' | 'leaseLost';

/** The abort reason a worker gives its job's signal. */
export class JobStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(reason === 'shutdown' ? 'the worker is shutting down' : 'the job lease was lost');
  }
}
