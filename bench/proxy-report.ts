// The proxy part's tables: medians per point, ratios to nginx, latency added over the direct call,
// and whether the targets of #15 hold, each against nginx with as many workers: ≥ 0.9× its
// requests per second and ≤ 1.3× its CPU per request at 64 connections, an added p50 at 1
// connection at most 20 µs above its own, a large answer streamed at least as fast with flat RSS,
// and many idle keep-alive clients held with flat memory.
import type { LoadResult } from './lib/load.js';
import { table, type Section } from './lib/report.js';
import { cell, median, ratio } from './lib/stats.js';

/** One run at one point. */
export interface Sample extends LoadResult {
  /** CPU milliseconds the target's processes spent per 1000 requests (NaN for direct). */
  cpuPer1k: number;
  upstreamCpuPer1k: number;
}

/** One request kind × connection count × target, with its repeated runs. */
export interface Point {
  scenario: string;
  connections: number;
  target: string;
  samples: Sample[];
}

/** Many keep-alive clients held at once by one target. */
export interface HoldRow {
  target: string;
  /** Clients answered twice on their own connection. */
  held: number;
  /** Resident memory of the target's processes before, in MiB. */
  rssBeforeMb: number;
  /** With every client connected and answered once. */
  rssFirstMb: number;
  /** After every client asked a second time on the same connection. */
  rssSecondMb: number;
}

/**
 * Largest rise of the peak RSS from the first half of the stream to the second that still counts
 * as flat, as a share of the answer: a proxy holding the answer would rise by half of it, while a
 * streaming one only swings with garbage collection (V8 collects the copied chunks in batches of
 * tens of MB, whatever the answer's size).
 */
const FLAT_STREAM_SHARE = 0.25;
/** Largest RSS growth between two rounds on the same held connections that counts as flat. */
const FLAT_HOLD_MB = 16;
/** Required share of nginx's requests per second, and largest CPU per request relative to nginx's. */
const MIN_RPS_RATIO = 0.9;
const MAX_CPU_RATIO = 1.3;
/** Latency a proxy may add over nginx's own addition at 1 connection (p50), in ms. */
const MAX_EXTRA_P50_MS = 0.02;

/** One target's large download. */
export interface StreamRow {
  target: string;
  mbPerSecond: number;
  /** Right after start. */
  rssStartMb: number;
  /** After the request runs, before the stream. */
  rssBeforeMb: number;
  rssPeakMb: number;
  /** Highest while the first half of the answer streamed (median of the runs). */
  rssFirstHalfMb: number;
  /** Highest while the second half streamed: above the first half's when memory grows with the answer. */
  rssSecondHalfMb: number;
}

type Medians = Record<'rps' | 'p50Ms' | 'p99Ms' | 'cpuPer1k' | 'upstreamCpuPer1k' | 'failures', number>;

function medians(p: Point): Medians {
  const m = (f: (s: Sample) => number) => median(p.samples.map(f));
  return {
    rps: m((s) => s.rps),
    p50Ms: m((s) => s.p50Ms),
    p99Ms: m((s) => s.p99Ms),
    cpuPer1k: m((s) => s.cpuPer1k),
    upstreamCpuPer1k: m((s) => s.upstreamCpuPer1k),
    failures: p.samples.reduce((n, s) => n + s.non2xx + s.errors, 0),
  };
}

const isNginx = (name: string) => name.startsWith('nginx');
const workersOf = (name: string) => /\((\d+) workers?\)/.exec(name)?.[1];

/** nginx with as many workers as `target` (or the first nginx), the reference of its ratio. */
function nginxFor(target: string, m: Map<string, Medians>): Medians | undefined {
  const nginx = [...m.entries()].filter(([name]) => isNginx(name));
  const same = nginx.find(([name]) => workersOf(name) === workersOf(target));
  return (same ?? nginx[0])?.[1];
}
const isOurs = (name: string) => name.startsWith('ours');

/** Builds the proxy sections of the report. */
export function proxyReport(
  points: readonly Point[],
  streams: readonly StreamRow[],
  holds: readonly HoldRow[],
  o: { connections: readonly number[]; streamBytes: number; holdClients: number },
): Section[] {
  const rows: string[][] = [];
  const checks: string[][] = [];
  const groups = [...new Set(points.map((p) => `${p.scenario}\u0000${p.connections}`))];
  for (const g of groups) {
    const [scenario, c] = g.split('\u0000') as [string, string];
    const group = points.filter((p) => p.scenario === scenario && String(p.connections) === c);
    const m = new Map(group.map((p) => [p.target, medians(p)]));
    const direct = m.get('direct');
    for (const p of group) {
      const x = m.get(p.target) as Medians;
      const nginx = nginxFor(p.target, m);
      const added = (v: number, d: number | undefined) =>
        p.target === 'direct' || d === undefined ? '–' : cell(v - d, 3);
      rows.push([
        scenario,
        c,
        p.target,
        cell(x.rps),
        ratio(x.rps, nginx?.rps ?? NaN),
        cell(x.p50Ms, 3),
        cell(x.p99Ms, 3),
        added(x.p50Ms, direct?.p50Ms),
        added(x.p99Ms, direct?.p99Ms),
        cell(x.cpuPer1k),
        cell(x.upstreamCpuPer1k),
        String(x.failures),
      ]);
      if (!isOurs(p.target)) continue;
      const floor = [...m.entries()].find(([name]) => name.includes('floor'))?.[1];
      if (floor !== undefined && c !== '1') {
        const r = x.rps / floor.rps;
        checks.push([
          `${scenario}, ${c} conn.: ${p.target} req/s ÷ the node:http + undici floor's`,
          r.toFixed(2),
          '(reference)',
        ]);
      }
      if (nginx !== undefined && c !== '1') {
        const r = x.rps / nginx.rps;
        checks.push([
          `${scenario}, ${c} conn.: ${p.target} req/s ÷ nginx's ≥ ${MIN_RPS_RATIO}`,
          r.toFixed(2),
          r >= MIN_RPS_RATIO ? 'yes' : '**no**',
        ]);
        const cpu = x.cpuPer1k / nginx.cpuPer1k;
        checks.push([
          `${scenario}, ${c} conn.: ${p.target} CPU per request ÷ nginx's ≤ ${MAX_CPU_RATIO}`,
          `${cpu.toFixed(2)} (${cell(x.cpuPer1k)} vs ${cell(nginx.cpuPer1k)} ms / 1k)`,
          cpu <= MAX_CPU_RATIO ? 'yes' : '**no**',
        ]);
      }
      if (direct !== undefined && nginx !== undefined && c === '1') {
        const ours = (x.p50Ms - direct.p50Ms) * 1000;
        const theirs = (nginx.p50Ms - direct.p50Ms) * 1000;
        checks.push([
          `${scenario}, 1 conn.: ${p.target} added p50 ≤ nginx's + ${MAX_EXTRA_P50_MS * 1000} µs`,
          `${ours.toFixed(0)} µs vs ${theirs.toFixed(0)} µs`,
          ours <= theirs + MAX_EXTRA_P50_MS * 1000 ? 'yes' : '**no**',
        ]);
      }
    }
  }
  const header = [
    'request',
    'conn.',
    'target',
    'req/s',
    '÷ nginx',
    'p50 ms',
    'p99 ms',
    '+p50 ms',
    '+p99 ms',
    'CPU ms / 1k req',
    'upstream CPU ms / 1k',
    'non-2xx + errors',
  ];
  const mb = Math.round(o.streamBytes / 2 ** 20);
  const streamChecks: string[][] = [];
  for (const sr of streams) {
    if (!isOurs(sr.target)) continue;
    const nginx = streams.find((n) => isNginx(n.target) && workersOf(n.target) === workersOf(sr.target));
    if (nginx !== undefined) {
      const r = sr.mbPerSecond / nginx.mbPerSecond;
      streamChecks.push([
        `${sr.target} MB/s ÷ nginx's ≥ 1`,
        `${r.toFixed(2)} (${cell(sr.mbPerSecond)} vs ${cell(nginx.mbPerSecond)})`,
        r >= 1 ? 'yes' : '**no**',
      ]);
    }
    const rise = sr.rssSecondHalfMb - sr.rssFirstHalfMb;
    const flatMb = mb * FLAT_STREAM_SHARE;
    streamChecks.push([
      `${sr.target} RSS flat: peak in the second half of the answer − the first half's ≤ ${cell(flatMb)} MiB`,
      `${cell(rise, 1)} MiB (${cell(sr.rssFirstHalfMb)} → ${cell(sr.rssSecondHalfMb)})`,
      rise <= flatMb ? 'yes' : '**no**',
    ]);
  }
  const holdChecks: string[][] = [];
  for (const h of holds) {
    if (!isOurs(h.target)) continue;
    const growth = h.rssSecondMb - h.rssFirstMb;
    holdChecks.push([
      `${h.target} holds ${o.holdClients} keep-alive clients, RSS flat (second round − first ≤ ${FLAT_HOLD_MB} MiB)`,
      `${h.held} held, ${cell(growth, 1)} MiB`,
      h.held === o.holdClients && growth <= FLAT_HOLD_MB ? 'yes' : '**no**',
    ]);
  }
  return [
    {
      title: 'Proxy: ours vs nginx vs the upstream directly',
      blocks: [
        'The development upstream in its minimal mode (one fixed 91-byte JSON answer) is called ' +
          'directly, through nginx, through our proxy and through node:http + undici with none of our work ' +
          '(the floor of our stack); wrk drives each from its own process. ' +
          '`+p50`/`+p99`: latency added over the direct call at the same point. CPU: user + system ' +
          "time of the proxy's processes (all of nginx's) per 1000 requests, a steadier measure than " +
          'req/s on a shared machine. All processes share the same cores, so a proxy that needs less ' +
          'CPU also leaves more to the upstream and the load generator.',
        table(header, rows),
        '**Targets** (each against nginx with as many workers)',
        table(['target', 'measured', 'holds'], checks),
      ],
    },
    {
      title: `Proxy: one ${mb} MB streamed answer`,
      blocks: [
        `GET /v4/stream?bytes=${o.streamBytes} with curl, median of the runs. RSS: resident memory of ` +
          "the proxy's processes right after start, after the request runs above (the heap a busy " +
          'node process keeps), and the highest sampled every 20 ms while streaming. nginx runs with ' +
          'its default proxy buffering, so it spools to a temporary file what the client reads slower. ' +
          'Flat memory: the peak while the second half of the answer streams is no higher than while ' +
          'the first half did, give or take a quarter of the answer (medians of the runs): memory that grew ' +
          'with the answer would rise by half of it, garbage collection swings it by tens of MB whatever its size.',
        table(
          ['target', 'MB/s', 'RSS at start MiB', 'RSS before MiB', 'peak RSS MiB'],
          streams.map((s) => [
            s.target,
            cell(s.mbPerSecond),
            cell(s.rssStartMb),
            cell(s.rssBeforeMb),
            cell(s.rssPeakMb),
          ]),
        ),
        table(['target', 'measured', 'holds'], streamChecks),
      ],
    },
    ...(holds.length === 0
      ? []
      : [
          {
            title: `Proxy: ${o.holdClients} keep-alive clients at once`,
            blocks: [
              `${o.holdClients} clients each open their own connection, send a GET and read the answer, ` +
                'keeping the connection open; then every one asks again on the same connection. RSS of ' +
                "the proxy's processes before, with all of them connected, and after the second round.",
              table(
                [
                  'target',
                  'held',
                  'RSS before MiB',
                  'RSS held MiB',
                  'RSS after 2nd round MiB',
                  'KiB / client',
                ],
                holds.map((h) => [
                  h.target,
                  `${h.held} / ${o.holdClients}`,
                  cell(h.rssBeforeMb),
                  cell(h.rssFirstMb),
                  cell(h.rssSecondMb),
                  cell(((h.rssFirstMb - h.rssBeforeMb) * 1024) / o.holdClients),
                ]),
              ),
              table(['target', 'measured', 'holds'], holdChecks),
            ],
          },
        ]),
  ];
}
