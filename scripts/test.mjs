#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's own test runner.
// Usage: node scripts/test.mjs [substring filter...]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { runsOnSupportedNode } from '../bin/node-runtime.js';

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...findTests(full));
    else if (name.endsWith('.test.js')) out.push(full);
  }
  return out;
}

/** Whether a compiled test still has its source: tsc leaves the output of a moved or deleted file. */
function hasSource(compiled) {
  return existsSync(compiled.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts'));
}

function main() {
  const filters = process.argv.slice(2);
  const files = ['dist/src', 'dist/test']
    .flatMap((d) => {
      try {
        return findTests(d);
      } catch {
        return [];
      }
    })
    .filter(hasSource)
    .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
    .sort();
  if (files.length === 0) {
    console.error('no test files found under dist/ (did the build run?)');
    process.exit(1);
  }
  const concurrency = process.env.TEST_CONCURRENCY ?? '2';
  // A test that hangs fails after 10 minutes (the slowest, the crash trials, take ~2.5 on a busy
  // machine) instead of holding the run until CI's own limit.
  const timeoutMs = process.env.TEST_TIMEOUT_MS ?? '600000';
  const result = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, '--test-reporter=spec', ...files],
    { stdio: 'inherit' },
  );
  process.exit(result.status ?? 1);
}

if (runsOnSupportedNode('scripts/test.mjs')) main();
