// The contract between bench/run.ts and each area's module (proxy, api, load, …).
import type { LoadTool } from './load.js';
import type { Section } from './report.js';

/** What every part gets from the runner. */
export interface BenchContext {
  /** A scratch folder of this run, removed at the end. */
  tmp: string;
  /** The compiled tree (`dist/`), where child-process entry points live. */
  dist: string;
  /** Seconds of load per measured point. */
  seconds: number;
  /** Repetitions per point; the report quotes their median. */
  runs: number;
  /** The load generator found on this machine. */
  tool: LoadTool;
  /** Progress on stderr (the report goes to stdout). */
  log(message: string): void;
}

/** One area of the suite. */
export interface BenchPart {
  /** What `node dist/bench/run.js --help` shows for it. */
  describe: string;
  /** Whether it drives HTTP load with `tool` (then the runner installs wrk when it can). */
  usesLoadTool?: boolean;
  /** Measures and returns the report's sections. */
  run(ctx: BenchContext): Promise<Section[]>;
}
