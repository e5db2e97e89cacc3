// Parsing in a thread of its own for stores that take COPY text (PostgreSQL). Parsing and
// validating is the CPU-heavy half of a load; in the job's thread it took turns with writing, so
// one core did both while the database waited. In a thread, the bytes flow in, COPY text flows
// out, and parsing, writing and the database's COPY run at the same time. Text is cheap to pass
// between threads; typed rows are not (their structured clone cost as much as parsing them), so
// SQLite, which needs the rows as values, parses in the job's thread.
import { Worker } from 'node:worker_threads';
import type { Readable } from 'node:stream';
import type { DatasetSchema } from '../domain/datasets/schema.js';
import type { ErrorCollector, InputFormat, ParseStats } from '../domain/loading/index.js';
import type { CopyThreadData, FromCopyThread, ParseProgress, ToCopyThread } from './copy-thread-protocol.js';

/** The parse thread's young generation (node's default grows to 32 MiB and more). */
const YOUNG_GENERATION_MB = 8;

/** Input chunks sent but not yet taken by the thread: bounds memory, keeps the thread fed. */
const CHUNKS_AHEAD = 8;

export interface CopyParseOptions {
  schema: DatasetSchema;
  format: InputFormat;
  errors: ErrorCollector;
  stats: ParseStats;
  signal: AbortSignal;
}

/** A batch of valid rows as COPY text; `rowCount` is 0 once the file has defects. */
export interface CopyBatch {
  text: string;
  rowCount: number;
}

/**
 * Parses `input` in a worker thread and yields COPY text batches, keeping `errors` and `stats`
 * as parseRecords would. Errors of the input itself (a failed download, the signal's reason) are
 * thrown as they are; the thread is stopped however the loop ends.
 */
export async function* parseToCopyText(
  input: Readable,
  options: CopyParseOptions,
): AsyncGenerator<CopyBatch, void, undefined> {
  const { errors, stats, signal } = options;
  const data: CopyThreadData = { schema: options.schema, format: options.format };
  const thread = new Worker(new URL('./copy-thread-entry.js', import.meta.url), {
    workerData: data,
    // A streaming parser's garbage is short-lived: a small young generation keeps the thread's
    // memory (and the service's peak RSS) down at little cost.
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  const send = (message: ToCopyThread, transfer?: ArrayBuffer[]) => thread.postMessage(message, transfer);

  const inbox: Exclude<FromCopyThread, { type: 'more' }>[] = [];
  // Set from event handlers, read by the loop below (an object, so TypeScript does not narrow it).
  const state: { failure: { error: unknown } | null; wakePump: (() => void) | null } = {
    failure: null,
    wakePump: null,
  };
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const fail = (error: unknown) => {
    state.failure ??= { error };
    notify();
  };
  let chunksAhead = 0;
  thread.on('message', (m: FromCopyThread) => {
    if (m.type === 'more') {
      chunksAhead--;
      const w = state.wakePump;
      state.wakePump = null;
      w?.();
      return;
    }
    inbox.push(m);
    notify();
  });
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`the parse thread exited (code ${code})`)));
  const onAbort = () => fail(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });

  let stopped = false;
  const pump = async () => {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      if (stopped) return;
      // A copy the thread can own: the stream's buffers may share memory with other data.
      const bytes = new Uint8Array(chunk);
      send({ type: 'chunk', data: bytes }, [bytes.buffer]);
      if (++chunksAhead >= CHUNKS_AHEAD) await new Promise<void>((resolve) => (state.wakePump = resolve));
    }
    send({ type: 'end' });
  };
  pump().catch(fail);

  const absorb = (p: ParseProgress) => {
    stats.rowsRead = p.rowsRead;
    errors.absorb(p.newErrors, p.errorCount);
  };
  try {
    for (;;) {
      if (state.failure !== null) throw state.failure.error;
      const m = inbox.shift();
      if (m === undefined) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (m.type === 'failed') throw new Error(m.message);
      absorb(m);
      if (m.type === 'done') return;
      yield { text: m.text, rowCount: m.rowCount };
      send({ type: 'written' });
    }
  } finally {
    stopped = true;
    signal.removeEventListener('abort', onAbort);
    thread.removeAllListeners('exit');
    const w = state.wakePump;
    state.wakePump = null;
    w?.();
    input.destroy();
    await thread.terminate();
  }
}
