// Messages between a load job and its COPY parse thread (see copy-thread.ts).
import type { DatasetSchema } from '../domain/datasets/schema.js';
import type { InputFormat, LoadError } from '../domain/loading/index.js';

/** What the thread is started with. */
export interface CopyThreadData {
  schema: DatasetSchema;
  format: InputFormat;
}

/** To the thread: the next bytes of the input, its end, or that a batch was written. */
export type ToCopyThread = { type: 'chunk'; data: Uint8Array } | { type: 'end' } | { type: 'written' };

/** Counters of the parse so far, with the kept errors not sent before. */
export interface ParseProgress {
  rowsRead: number;
  errorCount: number;
  newErrors: LoadError[];
}

/** From the thread: a batch of COPY text, a request for more input, the end, or a crash. */
export type FromCopyThread =
  | ({ type: 'batch'; text: string; rowCount: number } & ParseProgress)
  | { type: 'more' }
  | ({ type: 'done' } & ParseProgress)
  | { type: 'failed'; message: string };
