#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's own test runner.
// Usage: node scripts/test.mjs [substring filter...]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
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
  const run = (list, env) =>
    spawnSync(
      process.execPath,
      ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, '--test-reporter=spec', ...list],
      { stdio: 'inherit', env },
    ).status ?? 1;
  const status = run(files, process.env);
  // The proxy's suites run again on its second HTTP parser backend (src/proxy/parser/), unless a
  // backend was chosen for this run or the first already had no other (no built-in binding). The
  // parser's own tests check every backend in one run.
  const again =
    process.env.PROXY_HTTP_PARSER === undefined && hasBuiltinParser()
      ? files.filter((f) => /[\\/]proxy[\\/]/.test(f) && !/[\\/]proxy[\\/]parser[\\/]/.test(f))
      : [];
  if (again.length === 0) process.exit(status);
  console.log(`# the ${again.length} proxy suites again with PROXY_HTTP_PARSER=wasm`);
  const second = run(again, { ...process.env, PROXY_HTTP_PARSER: 'wasm' });
  process.exit(status !== 0 ? status : second);
}

/** Whether this Node.js has the binding the proxy's `builtin` parser backend uses. */
function hasBuiltinParser() {
  try {
    return typeof createRequire(import.meta.url)('_http_common').HTTPParser === 'function';
  } catch {
    return false;
  }
}

if (runsOnSupportedNode('scripts/test.mjs')) main();
