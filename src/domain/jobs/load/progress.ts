// Live progress of a load: counters the pipeline updates as it reads (bytes of the file as they
// come from the store or the URL, before gunzip; records from the parser's stats), which the worker
// running the job stores on its row about every second, and the shape the job view shows them in.
import { Transform, type TransformCallback } from 'node:stream';
import type { DatasetJobRow, JobStatus } from '../../../storage/db/tables.js';
import type { ParseStats } from '../../loading/index.js';

/** The figures of one moment of a load. */
export interface ProgressFigures {
  bytesRead: number;
  /** The file's size when known (the stored upload, or the fetched Content-Length), else null. */
  bytesTotal: number | null;
  rowsRead: number;
}

/** The counters of one running load. They are told to `store` once the file is open (its size
 * known) and once the whole file has been read, so the stored figures never show an unknown total
 * for a file whose size can be known, and the final figures are stored before the job ends (the
 * status and the figures agree). */
export class LoadProgress {
  bytesRead = 0;
  bytesTotal: number | null = null;
  /** Handed to the parser, which counts records into it as it reads them. */
  readonly stats: ParseStats = { rowsRead: 0 };
  private opened = false;

  constructor(private readonly store: () => Promise<void> = () => Promise.resolve()) {}

  /** The figures to store; undefined until the file is open (the job shows none yet). */
  figures(): ProgressFigures | undefined {
    if (!this.opened) return undefined;
    return { bytesRead: this.bytesRead, bytesTotal: this.bytesTotal, rowsRead: this.stats.rowsRead };
  }

  /** The file is open: `size` is its size (null: a URL that named none). */
  open(size: number | null): Promise<void> {
    this.bytesTotal = size;
    this.opened = true;
    return this.store();
  }

  /** A pass-through that counts the bytes flowing through it into `bytesRead`. */
  counter(): Transform {
    return new ByteCounter((n) => (this.bytesRead += n));
  }

  /** The whole file has been read: the figures are final. */
  parsed(): Promise<void> {
    return this.store();
  }
}

class ByteCounter extends Transform {
  constructor(private readonly count: (bytes: number) => void) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count(chunk.length);
    done(null, chunk);
  }
}

/** The progress of a job as its view shows it. */
export interface JobProgress extends ProgressFigures {
  /** When the worker last stored the figures. */
  updatedAt: string;
}

/** Whether a job in this state shows its stored figures: a job waiting for a worker (again, after
 * a release) has none yet, whatever an earlier attempt left on its row. */
const PROGRESS_SHOWN: Record<JobStatus, boolean> = {
  Created: false,
  Queued: false,
  Running: true,
  Completed: true,
  Failed: true,
  Expired: false,
};

/** The stored progress of a job, or null when it has none to show. */
export function progressOf(row: DatasetJobRow): JobProgress | null {
  if (!PROGRESS_SHOWN[row.status] || row.progress_at === null) return null;
  return {
    bytesRead: Number(row.progress_bytes ?? 0),
    bytesTotal: row.progress_total_bytes === null ? null : Number(row.progress_total_bytes),
    rowsRead: Number(row.progress_rows ?? 0),
    updatedAt: row.progress_at,
  };
}

/** The row's columns for stored figures. */
export function progressColumns(
  figures: ProgressFigures,
  at: string,
): Pick<DatasetJobRow, 'progress_bytes' | 'progress_total_bytes' | 'progress_rows' | 'progress_at'> {
  return {
    progress_bytes: figures.bytesRead,
    progress_total_bytes: figures.bytesTotal,
    progress_rows: figures.rowsRead,
    progress_at: at,
  };
}
