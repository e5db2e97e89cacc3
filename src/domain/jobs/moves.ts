// The state machine of a load job: every move it can make, from which states, to which, and who may
// make it. transitionJob (jobs.ts) is the only code that changes a job's status, and it takes one
// of these moves, so a status change that is not listed here cannot be written.
import type { JobStatus } from './status.js';

/** Who makes a move; besides the job's state, it is what guards the move. */
export type Mover =
  /** The worker holding the Running job's lease. */
  | { kind: 'leaseHolder'; owner: string }
  /** A worker taking a job that is ready to run: Queued, or Running under a lapsed lease (its
   * worker died or stalled). It takes the lease for `leaseMs` and counts an attempt. */
  | { kind: 'claimer'; owner: string; leaseMs: number }
  /** The PUT holding the upload's claim. */
  | { kind: 'uploadClaimHolder'; claim: string }
  /** The service itself (a file seen in the store, housekeeping): the state alone guards the move. */
  | { kind: 'service' };
export type MoverKind = Mover['kind'];

/** One entry of JOB_MOVES. */
export interface MoveRule {
  readonly from: readonly JobStatus[];
  readonly to: JobStatus;
  readonly by: readonly MoverKind[];
}

/** Every move a job can make. A job holds a lease exactly while Running (only `claimed` leads
 * there), and an upload claim only while Created (every move ends it). */
export const JOB_MOVES = {
  /** The upload's file arrived: stored by the PUT holding the claim, or seen in the store. */
  fileReceived: { from: ['Created'], to: 'Queued', by: ['uploadClaimHolder', 'service'] },
  /** The file seen in the store is larger than UPLOAD_MAX_BYTES. */
  fileRefused: { from: ['Created'], to: 'Failed', by: ['service'] },
  /** The upload URL (or resumable session) lapsed before its file was complete. */
  uploadExpired: { from: ['Created'], to: 'Expired', by: ['service'] },
  /** A worker takes the job to run it. */
  claimed: { from: ['Queued', 'Running'], to: 'Running', by: ['claimer'] },
  /** A worker finds the job interrupted too often and ends it instead of running it again. */
  gaveUp: { from: ['Queued', 'Running'], to: 'Failed', by: ['claimer'] },
  /** The records were committed (in the same transaction as this move). */
  completed: { from: ['Running'], to: 'Completed', by: ['leaseHolder'] },
  /** The load could not complete; nothing changed. */
  failed: { from: ['Running'], to: 'Failed', by: ['leaseHolder'] },
  /** The worker shuts down: back to the queue, to run again from scratch. */
  released: { from: ['Running'], to: 'Queued', by: ['leaseHolder'] },
} as const satisfies Record<string, MoveRule>;

export type JobMove = keyof typeof JOB_MOVES;

/** The state a move leads to. */
export type TargetOf<M extends JobMove> = (typeof JOB_MOVES)[M]['to'];

/** The movers that may make a move. */
export type MoverOf<M extends JobMove> = Extract<Mover, { kind: (typeof JOB_MOVES)[M]['by'][number] }>;
