// Runs inside the COPY parse thread: parses the bytes the job sends, validates them against the
// schema and hands back batches of rows as COPY text (see copy-thread.ts for why).
import { parentPort, workerData } from 'node:worker_threads';
import { ErrorCollector, parseRecords, type ParseStats } from '../domain/loading/index.js';
import { formatCopyRows } from '../storage/records/copy-text.js';
import type { CopyThreadData, FromCopyThread, ParseProgress, ToCopyThread } from './copy-thread-protocol.js';

/** Batches sent but not yet written by the job: enough to keep both threads busy. */
const BATCHES_AHEAD = 4;

const port = parentPort;
if (port === null) throw new Error('copy-thread-entry runs only as a worker thread');
const { schema, format } = workerData as CopyThreadData;
const send = (message: FromCopyThread) => port.postMessage(message);

// Input: chunks queue up as they arrive; taking one asks the job for the next.
const chunks: Uint8Array[] = [];
let ended = false;
let wakeReader: (() => void) | null = null;
// Output: the job confirms each written batch, so at most BATCHES_AHEAD wait in memory.
let batchesAhead = 0;
let wakeWriter: (() => void) | null = null;

port.on('message', (m: ToCopyThread) => {
  if (m.type === 'chunk') chunks.push(m.data);
  else if (m.type === 'end') ended = true;
  else batchesAhead--;
  const wake = m.type === 'written' ? wakeWriter : wakeReader;
  if (m.type === 'written') wakeWriter = null;
  else wakeReader = null;
  wake?.();
});

async function* input(): AsyncGenerator<Buffer> {
  for (;;) {
    const chunk = chunks.shift();
    if (chunk !== undefined) {
      send({ type: 'more' });
      yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    } else if (ended) return;
    else await new Promise<void>((resolve) => (wakeReader = resolve));
  }
}

const errors = new ErrorCollector();
const stats: ParseStats = { rowsRead: 0 };
let errorsSent = 0;
function progress(): ParseProgress {
  const newErrors = errors.errors.slice(errorsSent);
  errorsSent = errors.errors.length;
  return { rowsRead: stats.rowsRead, errorCount: errors.count, newErrors };
}

try {
  let rowNumber = 1;
  for await (const batch of parseRecords(input(), { schema, format, errors, stats })) {
    // As in the job's own loop: after the first defect nothing is written, only counted.
    const text = errors.count === 0 ? formatCopyRows(batch.rows, rowNumber) : '';
    const rowCount = errors.count === 0 ? batch.rows.length : 0;
    rowNumber += rowCount;
    while (batchesAhead >= BATCHES_AHEAD) await new Promise<void>((resolve) => (wakeWriter = resolve));
    batchesAhead++;
    send({ type: 'batch', text, rowCount, ...progress() });
  }
  send({ type: 'done', ...progress() });
} catch (err) {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}
