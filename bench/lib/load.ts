// Load generation in its own process: wrk (C, one thread, leaves the CPU to the servers) with a
// Lua script that reports exact figures as JSON, or the autocannon CLI when wrk is missing.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './spawn.js';
import { hasCommand } from './tools.js';

/** One load run. */
export interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** What one run measured. */
export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  avgMs: number;
  requests: number;
  /** Responses outside 2xx/3xx. */
  non2xx: number;
  /** Connect/read/write errors and timeouts. */
  errors: number;
}

/** Which generator `runLoad` uses. */
export type LoadTool = 'wrk' | 'autocannon';

// Percentiles in microseconds straight from wrk's histogram, not its rounded text output.
const WRK_SCRIPT = `
local body = os.getenv("BENCH_BODY_FILE")
if body ~= nil and body ~= "" then
  local f = assert(io.open(body, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
end
done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format('{"requests":%d,"micros":%d,"non2xx":%d,"errors":%d,"p50":%d,"p99":%d,"mean":%f}\\n',
    s.requests, s.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
`;

let scriptDir = '';

/** Prepares the generator: wrk when installed, else autocannon; `dir` holds its scratch files. */
export function loadTool(dir: string): LoadTool {
  scriptDir = dir;
  writeFileSync(join(dir, 'report.lua'), WRK_SCRIPT);
  return hasCommand('wrk') ? 'wrk' : 'autocannon';
}

/** Runs one load and returns its figures. */
export async function runLoad(tool: LoadTool, spec: LoadSpec): Promise<LoadResult> {
  return tool === 'wrk' ? wrk(spec) : autocannon(spec);
}

async function wrk(spec: LoadSpec): Promise<LoadResult> {
  const headers = Object.entries(spec.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  let bodyFile = '';
  if (spec.body !== undefined) {
    bodyFile = join(scriptDir, `body-${spec.body.length}.bin`);
    writeFileSync(bodyFile, spec.body);
  }
  const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--timeout', '5s'];
  args.push('-s', join(scriptDir, 'report.lua'), ...headers, spec.url);
  // The body file is named in the environment rather than as a script argument after `--`.
  const out = await run('wrk', args, {
    timeoutMs: (spec.seconds + 30) * 1000,
    env: { BENCH_BODY_FILE: bodyFile },
  });
  const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
  if (line === undefined) throw new Error(`wrk printed no report:\n${out}`);
  const r = JSON.parse(line) as Record<
    'requests' | 'micros' | 'non2xx' | 'errors' | 'p50' | 'p99' | 'mean',
    number
  >;
  return {
    rps: r.requests / (r.micros / 1e6),
    p50Ms: r.p50 / 1000,
    p99Ms: r.p99 / 1000,
    avgMs: r.mean / 1000,
    requests: r.requests,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

async function autocannon(spec: LoadSpec): Promise<LoadResult> {
  const bin = fileURLToPath(new URL('../../../node_modules/autocannon/autocannon.js', import.meta.url));
  if (!existsSync(bin)) throw new Error('neither wrk nor autocannon is available');
  const args = [bin, '--json', '-c', String(spec.connections), '-d', String(spec.seconds)];
  for (const [k, v] of Object.entries(spec.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (spec.method !== undefined) args.push('-m', spec.method);
  if (spec.body !== undefined) args.push('-b', spec.body);
  const out = await run(process.execPath, [...args, spec.url], { timeoutMs: (spec.seconds + 30) * 1000 });
  const r = JSON.parse(out) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number; average: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  };
  return {
    rps: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    avgMs: r.latency.average,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}
