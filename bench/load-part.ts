// The `load` part of the suite: runs bench/load.js (a 1M × 8 CSV loaded end to end, beside
// `sqlite3 .import` and `psql \copy`) in its own process, so its peak RSS is the load's alone.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { BenchPart } from './lib/part.js';

/** Rows per load: BENCH_LOAD_ROWS, default one million. */
const ROWS = process.env.BENCH_LOAD_ROWS ?? '1000000';

export const loadPart: BenchPart = {
  describe: `record loads end to end vs sqlite3 .import and psql \\copy (${ROWS} rows × 8 columns)`,
  async run(ctx) {
    ctx.log(`load: ${ROWS} rows on SQLite and PostgreSQL`);
    const result = spawnSync(process.execPath, [join(ctx.dist, 'bench', 'load.js'), ROWS], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (result.status !== 0) throw new Error(`bench/load.js exited with ${result.status}`);
    return [{ title: 'Record loads', blocks: ['```', result.stdout.trimEnd(), '```'] }];
  },
};
