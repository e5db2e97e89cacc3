// V8 lets the old generation grow to 4× what survived its last full collection when the heap's
// ceiling is large (Node.js sizes it from the host's memory). A load allocates about 1 GB/s, and
// what it promotes is short-lived garbage, so on a large host the old generation reached 4× the
// service's live heap before each full collection: 290–360 MiB of RSS at 10M rows. While a load
// runs, the old generation grows by half instead (`--heap-growing-percent`, which V8 reads each
// time it sets the next limit); the flag is back to V8's own choice once no load runs, so the API's
// small requests pay no more full collections than before (docs/benchmarks.md, "Memory").
import { setFlagsFromString } from 'node:v8';

/** Old-generation growth while a load runs: +50 % per full collection. */
export const LOAD_HEAP_GROWING_PERCENT = 50;

/** Sets and clears the growth limit; a seam for tests. */
export type SetHeapGrowth = (percent: number) => void;

const v8HeapGrowth: SetHeapGrowth = (percent) => setFlagsFromString(`--heap-growing-percent=${percent}`);

/** Runs tasks with the old generation's growth capped while at least one of them runs. */
export class HeapGrowthWhileRunning {
  private running = 0;

  constructor(
    private readonly percent = LOAD_HEAP_GROWING_PERCENT,
    private readonly set: SetHeapGrowth = v8HeapGrowth,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running++ === 0) this.set(this.percent);
    try {
      return await task();
    } finally {
      // 0: V8 picks the factor itself again.
      if (--this.running === 0) this.set(0);
    }
  }
}

/** The process's one gate: every load of this process counts in it. */
export const loadHeapGrowth = new HeapGrowthWhileRunning();
