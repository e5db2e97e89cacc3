// What happens to a job, told to whoever watches this process (its log line and metrics, made by
// the composition root). The watcher rides on the Kysely handle as a plugin, so every move made
// through the process's database handle (or a transaction opened on it) is seen, whichever role
// made it, without passing an extra argument through every caller of transitionJob.
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { DatasetJobRow } from '../../storage/db/tables.js';
import type { Db } from '../identity/users.js';
import type { JobMove } from './moves.js';
import type { ErrorData, JobStatus, LogData } from './status.js';

/** The lifecycle events of a job (its log line's `event`). */
export type JobEventName = 'created' | 'queued' | 'started' | 'completed' | 'failed' | 'expired' | 'released';

/** The event each move is; a move missing here does not compile. */
export const EVENT_OF_MOVE = {
  fileReceived: 'queued',
  fileRefused: 'failed',
  uploadExpired: 'expired',
  claimed: 'started',
  gaveUp: 'failed',
  completed: 'completed',
  failed: 'failed',
  released: 'released',
} as const satisfies Record<JobMove, JobEventName>;

/** One thing that happened to a job. */
export interface JobEvent {
  event: JobEventName;
  job: DatasetJobRow;
  status: JobStatus;
  log: LogData;
  error: ErrorData | null;
}

export type JobObserver = (event: JobEvent) => void;

/** Carries the observer on a Kysely handle; it changes no query. */
export class JobObserverPlugin implements KyselyPlugin {
  constructor(readonly observe: JobObserver) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

/** Tells the observer of `db`'s handle (if any) about a job event; an observer's fault never
 * reaches the move. */
export function emitJobEvent(db: Db, event: JobEvent): void {
  for (const plugin of db.getExecutor().plugins) {
    if (plugin instanceof JobObserverPlugin) {
      try {
        plugin.observe(event);
      } catch {
        // Logging and metrics must not fail a job's move.
      }
    }
  }
}
