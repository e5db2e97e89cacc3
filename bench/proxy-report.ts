// The proxy part's tables: medians per point, ratios to nginx, latency added over the direct call,
// and whether the targets (≥ 0.8× nginx's throughput, ≤ 2 ms added p99 at 1 connection) hold.
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

/** One target's large download. */
export interface StreamRow {
  target: string;
  mbPerSecond: number;
  /** Right after start. */
  rssStartMb: number;
  /** After the request runs, before the stream. */
  rssBeforeMb: number;
  rssPeakMb: number;
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
  o: { connections: readonly number[]; streamBytes: number },
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
          `${scenario}, ${c} conn.: ${p.target} req/s ÷ nginx's ≥ 0.8`,
          r.toFixed(2),
          r >= 0.8 ? 'yes' : '**no**',
        ]);
      }
      if (direct !== undefined && c === '1') {
        const d = x.p99Ms - direct.p99Ms;
        checks.push([
          `${scenario}, 1 conn.: ${p.target} added p99 ≤ 2 ms`,
          `${d.toFixed(3)} ms`,
          d <= 2 ? 'yes' : '**no**',
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
        '**Targets**',
        table(['target', 'measured', 'holds'], checks),
      ],
    },
    {
      title: `Proxy: one ${mb} MB streamed answer`,
      blocks: [
        `GET /v4/stream?bytes=${o.streamBytes} with curl, median of the runs. RSS: resident memory of ` +
          "the proxy's processes right after start, after the request runs above (the heap a busy " +
          'node process keeps), and the highest sampled every 20 ms while streaming. nginx runs with ' +
          'its default proxy buffering, so it spools to a temporary file what the client reads slower.',
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
      ],
    },
  ];
}
