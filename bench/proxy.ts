// Proxy part: requests/s, latency and CPU per request through our proxy, through nginx, and to the
// upstream directly, at 1 and 64 connections, GET and 1 KB POST; then a 100 MB streamed answer.
import { join } from 'node:path';
import { openDatabase } from '../src/storage/db/database.js';
import { migrateToLatest } from '../src/storage/db/migrate.js';
import { SqlProxyIdStore } from '../src/domain/identity/proxy-ids.js';
import { download } from './lib/download.js';
import { holdClients } from './lib/hold.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { ensureNginx } from './lib/nginx.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { table, type Section } from './lib/report.js';
import { cpuMs, sampleRss, sampleRssHalves, totalCpuMs } from './lib/procfs.js';
import { stop } from './lib/spawn.js';
import { median } from './lib/stats.js';
import { canCountInstructions, countInstructions } from './proxy-instructions.js';
import { proxyReport, type HoldRow, type Point, type StreamRow } from './proxy-report.js';
import {
  directTarget,
  floorTarget,
  nginxTarget,
  proxyTarget,
  startUpstream,
  type Target,
} from './proxy-targets.js';

const AUTH = `Basic ${Buffer.from('benchApp:0123456789abcdef|1').toString('base64')}`;
const WORKERS = (process.env.BENCH_PROXY_WORKERS ?? '1').split(',').map(Number);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,64').split(',').map(Number);
const STREAM_BYTES = Number(process.env.BENCH_STREAM_MB ?? 100) * 2 ** 20;
/** Idle keep-alive clients held at once (0: skip that step). */
const HOLD_CLIENTS = Number(process.env.BENCH_HOLD_CLIENTS ?? 1000);
/**
 * Requests counted under callgrind per server (0: skip that step; it needs valgrind and takes
 * minutes, since the servers run 20–50× slower under it).
 */
const INSTRUCTION_REQUESTS = Number(process.env.BENCH_INSTRUCTIONS ?? 0);
/** Whether to measure node:http + undici with none of our work, the floor of our stack. */
const FLOOR = process.env.BENCH_FLOOR !== '0';
/**
 * Other builds to run beside this one, `label=dist-dir,…` (e.g. `main=/tmp/main/dist`): before and
 * after figures of an optimisation measured side by side in one run.
 */
const COMPARE = (process.env.BENCH_COMPARE ?? '')
  .split(',')
  .filter((s) => s.includes('='))
  .map((s) => s.split('=') as [string, string]);

/**
 * PROXY_HTTP_PARSER values this build runs with, one target each (e.g. `auto,wasm`): the default
 * parser backend beside the WebAssembly one.
 */
const PARSERS = (process.env.BENCH_PROXY_PARSERS ?? 'auto').split(',').filter((s) => s !== '');

/** The request kinds measured. */
export const SCENARIOS = [
  { label: 'GET', path: '/v4/echoes?state=DC&limit=10' },
  { label: 'POST 1 KB', path: '/v4/echoes', body: JSON.stringify({ note: 'x'.repeat(1012) }) },
] as const;

/** The proxy part of the suite. */
export const proxyPart: BenchPart = {
  usesLoadTool: true,
  describe: 'our proxy vs nginx vs the upstream directly (req/s, latency, CPU, 100 MB stream)',
  run: runProxyBench,
};

async function runProxyBench(ctx: BenchContext) {
  const databaseUrl = `sqlite:${join(ctx.tmp, 'proxy.sqlite')}`;
  const database = await openDatabase(databaseUrl);
  await migrateToLatest(database);
  const { id } = await new SqlProxyIdStore(database.db).create('bench');
  await database.close();

  const upstream = await startUpstream(ctx.dist);
  const upstreamPid = upstream.child.pid as number;
  const targets: Target[] = [directTarget(upstream.url, AUTH)];
  try {
    const viaProxy = { authorization: AUTH, 'x-proxyvid': id };
    const common = { upstreamUrl: upstream.url, databaseUrl, dataDir: ctx.tmp, headers: viaProxy };
    for (const workers of WORKERS) {
      if (ensureNginx())
        targets.push(await nginxTarget(join(ctx.tmp, `nginx-${workers}`), upstream.url, workers, AUTH));
      else ctx.log('nginx is not installed and could not be: measured without it');
      const logFile = (label: string) => join(ctx.tmp, `access-${label}-${workers}.log`);
      for (const httpParser of PARSERS) {
        const label = httpParser === 'auto' ? 'ours' : `ours ${httpParser}`;
        targets.push(
          await proxyTarget({
            ...common,
            dist: ctx.dist,
            label,
            workers,
            logFile: logFile(label),
            httpParser,
          }),
        );
      }
      for (const [label, dist] of COMPARE) {
        targets.push(await proxyTarget({ ...common, dist, label, workers, logFile: logFile(label) }));
      }
    }
    if (FLOOR) targets.push(await floorTarget(ctx.dist, upstream.url, AUTH));
    for (const t of targets) ctx.log(`${t.name}: ${t.url}`);
    const points = await measurePoints(ctx, targets, upstreamPid);
    const streams = await measureStreams(ctx, targets);
    const holds = HOLD_CLIENTS > 0 ? await measureHolds(ctx, targets) : [];
    const sections = proxyReport(points, streams, holds, {
      connections: CONNECTIONS,
      streamBytes: STREAM_BYTES,
      holdClients: HOLD_CLIENTS,
    });
    if (INSTRUCTION_REQUESTS > 0) sections.push(await instructionSection(ctx));
    return sections;
  } finally {
    for (const t of targets) await t.stop();
    await stop(upstream.child);
  }
}

/** Every target at every point, interleaved run by run so a change in machine load hits all alike. */
async function measurePoints(ctx: BenchContext, targets: Target[], upstreamPid: number): Promise<Point[]> {
  const points: Point[] = [];
  for (const scenario of SCENARIOS)
    for (const connections of CONNECTIONS)
      for (const target of targets)
        points.push({ scenario: scenario.label, connections, target: target.name, samples: [] });
  for (let run = 0; run < ctx.runs; run++) {
    for (const scenario of SCENARIOS) {
      for (const connections of CONNECTIONS) {
        // Rotate the order each run so no target always goes first (or last) after a pause.
        const order = targets.map((_, i) => targets[(i + run) % targets.length] as Target);
        for (const target of order) {
          const spec = {
            url: target.url + scenario.path,
            connections,
            seconds: ctx.seconds,
            headers:
              'body' in scenario ? { ...target.headers, 'content-type': 'application/json' } : target.headers,
            ...('body' in scenario ? { method: 'POST' as const, body: scenario.body } : {}),
          };
          if (run === 0) await runLoad(ctx.tool, { ...spec, seconds: 1 }); // warm-up: JIT, pools
          const pids = target.pids();
          const cpu0 = totalCpuMs(pids);
          const up0 = cpuMs(upstreamPid);
          const r: LoadResult = await runLoad(ctx.tool, spec);
          const point = points.find(
            (p) => p.scenario === scenario.label && p.connections === connections && p.target === target.name,
          ) as Point;
          point.samples.push({
            ...r,
            cpuPer1k: pids.length === 0 ? NaN : ((totalCpuMs(pids) - cpu0) / r.requests) * 1000,
            upstreamCpuPer1k: ((cpuMs(upstreamPid) - up0) / r.requests) * 1000,
          });
          ctx.log(
            `  run ${run + 1} ${scenario.label} c=${connections} ${target.name}: ${Math.round(r.rps)} req/s ` +
              `p50 ${r.p50Ms.toFixed(3)} p99 ${r.p99Ms.toFixed(3)} ms${r.non2xx + r.errors > 0 ? ` (${r.non2xx} non-2xx, ${r.errors} errors)` : ''}`,
          );
        }
      }
    }
  }
  return points;
}

/** The large streamed answer through each target: throughput and the proxy's resident memory. */
async function measureStreams(ctx: BenchContext, targets: Target[]): Promise<StreamRow[]> {
  const rows: StreamRow[] = [];
  for (const target of targets) {
    const url = `${target.url}/v4/stream?bytes=${STREAM_BYTES}`;
    await download(url, target.headers); // warm-up
    const pids = target.pids();
    const rates: number[] = [];
    const peaks: number[] = [];
    const halves: { firstMb: number; secondMb: number }[] = [];
    const before = sampleRss(pids)();
    for (let run = 0; run < ctx.runs; run++) {
      const done = sampleRssHalves(pids);
      const d = await download(url, target.headers);
      const h = done();
      halves.push(h);
      peaks.push(Math.max(h.firstMb, h.secondMb));
      if (d.bytes !== STREAM_BYTES)
        throw new Error(`${target.name}: got ${d.bytes} of ${STREAM_BYTES} bytes`);
      rates.push(d.mbPerSecond);
    }
    // The upstream called directly has no process of its own to weigh.
    const mem = pids.length === 0 ? NaN : 1;
    const row: StreamRow = {
      target: target.name,
      mbPerSecond: median(rates),
      rssStartMb: target.startRssMb,
      rssBeforeMb: before * mem,
      rssPeakMb: Math.max(...peaks) * mem,
      rssFirstHalfMb: median(halves.map((h) => h.firstMb)) * mem,
      rssSecondHalfMb: median(halves.map((h) => h.secondMb)) * mem,
    };
    ctx.log(
      `  stream ${target.name}: ${Math.round(row.mbPerSecond)} MB/s, RSS ${Math.round(before)} → ${Math.round(row.rssPeakMb)} MiB`,
    );
    rows.push(row);
  }
  return rows;
}

/**
 * HOLD_CLIENTS keep-alive clients on nginx and on our proxy at once, each asking twice on its own
 * connection: whether all are served, and the resident memory of the proxy's processes meanwhile.
 */
async function measureHolds(ctx: BenchContext, targets: Target[]): Promise<HoldRow[]> {
  const rows: HoldRow[] = [];
  for (const target of targets) {
    const pids = target.pids();
    // The upstream called directly and the floor are not proxies to compare here.
    if (pids.length === 0 || target.name.includes('floor')) continue;
    const rss = () => pids.reduce((sum, pid) => sum + sampleRss([pid])(), 0);
    const before = rss();
    const after: number[] = [];
    const r = await holdClients(target.url, SCENARIOS[0].path, target.headers, HOLD_CLIENTS, () =>
      after.push(rss()),
    );
    const row: HoldRow = {
      target: target.name,
      held: r.held,
      rssBeforeMb: before,
      rssFirstMb: after[0] ?? NaN,
      rssSecondMb: after[1] ?? NaN,
    };
    ctx.log(
      `  ${HOLD_CLIENTS} keep-alive clients on ${target.name}: ${r.held} held, RSS ${Math.round(before)} → ` +
        `${Math.round(row.rssFirstMb)} → ${Math.round(row.rssSecondMb)} MiB`,
    );
    rows.push(row);
  }
  return rows;
}

/**
 * Instructions per request of our proxy and nginx (one process each), counted by callgrind: a
 * figure that does not move with the machine's load, unlike requests/s and CPU time.
 */
async function instructionSection(ctx: BenchContext): Promise<Section> {
  const title = 'Proxy: instructions per request (callgrind)';
  if (!canCountInstructions() || !ensureNginx())
    return { title, blocks: ['Not measured: valgrind (callgrind) or nginx is not installed.'] };
  const mb = Math.max(1, Math.round(STREAM_BYTES / 2 ** 20 / 4));
  const rows = await countInstructions(
    ctx.dist,
    ['ours', 'nginx', ...COMPARE.map(([label, dist]) => `${label}=${dist}`)],
    { requests: INSTRUCTION_REQUESTS, connections: 64, streamMb: mb },
    (m) => ctx.log(m),
  );
  const nginx = rows.find((r) => r.target === 'nginx');
  const k = (n: number) => `${Math.round(n / 1000)}k`;
  const vs = (n: number, ref: number | undefined) =>
    ref === undefined ? k(n) : `${k(n)} (${(n / ref).toFixed(1)}×)`;
  return {
    title,
    blocks: [
      `Each server alone under valgrind's callgrind (our proxy with one worker, nginx with one process), ` +
        `after a warm-up: ${INSTRUCTION_REQUESTS} GET and ${INSTRUCTION_REQUESTS} POST 1 KB requests at 64 ` +
        `connections, then one ${mb} MB streamed answer. User-space instructions of all the process's ` +
        'threads (JIT, garbage collection included), not the kernel’s: both make the same syscalls per ' +
        'request. Unlike requests/s or CPU time, the count does not change with the load of the machine.',
      table(
        ['target', 'GET', 'POST 1 KB', 'per MB streamed'],
        rows.map((r) => [
          r.target,
          vs(r.perGet, nginx?.perGet),
          vs(r.perPost, nginx?.perPost),
          vs(r.perStreamMb, nginx?.perStreamMb),
        ]),
      ),
    ],
  };
}
