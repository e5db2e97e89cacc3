// The service's threads (SQLite's long statements, an export's sort and rendering) and their V8
// heaps. A thread is an isolate of its own, with a young generation of its own: under the
// `--max-semi-space-size=16` the service starts with, each grew to 3 × 16 MiB while it rendered,
// on top of the event loop's (an export of 1M records on a thread: its heap 67 MiB, the process's
// peak past 300 MB). A thread is given a small young generation instead (`resourceLimits`), which
// V8 honours only when no semi-space flag overrides it: the flag is cleared once, before the first
// thread starts. The event loop's heap keeps the size it was given at start (V8 sizes a heap when
// it creates it; measured: its new space stays at 2 × 16 MiB), and only later isolates see the
// cleared flag, each with the limit it is given here.
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';

/** Each thread's young generation, MB (V8's default on a large host: 3 × 64). */
export const THREAD_YOUNG_GENERATION_MB = 4;

let flagCleared = false;

/** Starts the thread entry `script` with `workerData`, its young generation held to THREAD_YOUNG_GENERATION_MB. */
export function startThread(script: URL, workerData: unknown): Worker {
  if (!flagCleared) {
    setFlagsFromString('--max-semi-space-size=0'); // 0: unset, so each isolate's own limit counts
    flagCleared = true;
  }
  return new Worker(script, {
    workerData,
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
  });
}
