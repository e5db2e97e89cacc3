// The benchmark suite: runs the selected parts (all by default), prints the report and writes it
// to BENCHMARKS.md. Started by run.ts once the Node.js is one the suite can run on.
// A new area is one import and one entry in PARTS.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { apiPart } from './api.js';
import { changesPart } from './changes.js';
import { exportsPart } from './exports.js';
import { jobsPart } from './jobs.js';
import { loadPart } from './load-part.js';
import { loadTool } from './lib/load.js';
import type { BenchPart } from './lib/part.js';
import { loadAverage } from './lib/procfs.js';
import { writeReport, type Section } from './lib/report.js';
import { ensureCommand } from './lib/tools.js';
import { proxyPart } from './proxy.js';
import { readsPart } from './reads.js';

const PARTS: Record<string, BenchPart> = {
  proxy: proxyPart,
  api: apiPart,
  load: loadPart,
  reads: readsPart,
  exports: exportsPart,
  jobs: jobsPart,
  changes: changesPart,
};

/** The line each section starts with: how busy the machine was, and what the figures compare with. */
function partConditions(before: string, after: string): string {
  return (
    `*Load average (1/5/15 min) before → after this part: ${before} → ${after}, on ${cpus().length} cores. ` +
    'Figures compare only within this run (side by side on the same machine); across runs, compare ratios.*'
  );
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: process.env.BENCH_SECONDS ?? '5' },
    runs: { type: 'string', default: process.env.BENCH_RUNS ?? '3' },
    out: { type: 'string', default: 'BENCHMARKS.md' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: node dist/bench/run.js [part…] [--seconds N] [--runs N] [--out FILE]\n\nparts:');
  for (const [name, part] of Object.entries(PARTS)) console.log(`  ${name.padEnd(8)} ${part.describe}`);
  process.exit(0);
}
const selected = positionals.length === 0 ? Object.keys(PARTS) : positionals;
const unknown = selected.filter((name) => !(name in PARTS));
if (unknown.length > 0) {
  console.error(`unknown part(s): ${unknown.join(', ')}; known: ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}

// wrk is lighter than autocannon, which leaves more of a small machine's CPU to the servers.
if (selected.some((name) => PARTS[name]?.usesLoadTool === true)) ensureCommand('wrk', ['wrk']);
const tmp = mkdtempSync(join(tmpdir(), 'dx-bench-'));
// nginx's workers drop root and must still reach their temp folders inside this one.
chmodSync(tmp, 0o755);
const ctx = {
  tmp,
  dist: fileURLToPath(new URL('..', import.meta.url)),
  seconds: Number(values.seconds),
  runs: Number(values.runs),
  tool: loadTool(tmp),
  log: (message: string) => console.error(message),
};
const startedAt = new Date();
const loadBefore = loadAverage();
console.error(`load average ${loadBefore}; ${ctx.runs} × ${ctx.seconds} s per point with ${ctx.tool}`);
const sections: Section[] = [];
try {
  for (const name of selected) {
    ctx.log(`\n== ${name}`);
    const before = loadAverage();
    const partSections = await (PARTS[name] as BenchPart).run(ctx);
    const conditions = partConditions(before, loadAverage());
    sections.push(...partSections.map((s) => ({ ...s, blocks: [conditions, ...s.blocks] })));
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
writeReport(
  values.out,
  {
    startedAt,
    loadBefore,
    secondsPerPoint: ctx.seconds,
    runsPerPoint: ctx.runs,
    loadTool: ctx.tool,
  },
  sections,
);
