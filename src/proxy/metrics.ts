// Prometheus metrics of the proxy, per proxy ID (its non-secret prefix), method and status class.
// Requests are counted in plain numbers in a table: prom-client's metrics hash and validate their
// labels on every observation (measured: 3–10 µs per proxied request for the five metrics, against
// 0.04–0.14 µs here) and have no call that sets a histogram's buckets. When /metrics is scraped, the
// table is written out in prom-client's metric JSON, and prom-client's AggregatorRegistry sums the
// JSON of this process, or of every cluster worker, into a registry that renders the text.
import { AggregatorRegistry, type Registry } from 'prom-client';

/** Methods that get their own label value; any other is counted as OTHER (bounded cardinality). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER'] as const;
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Label value for requests refused before a proxy ID was recognised. */
export const UNKNOWN_PROXY_ID = 'none';

/** One finished request, as the metrics see it. */
export interface RequestSample {
  proxyId: string;
  method: string;
  status: number;
  bytesIn: number;
  bytesOut: number;
  /** Seconds from sending to the upstream until its response headers; NaN when never forwarded. */
  upstreamSeconds: number;
  totalSeconds: number;
}

/** A histogram's state: per-bucket (not cumulative) counts, sum and count. */
class Observations {
  readonly buckets: number[] = BUCKETS.map(() => 0);
  sum = 0;
  count = 0;

  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (value <= (BUCKETS[i] as number)) {
        (this.buckets[i] as number)++;
        return;
      }
    }
  }
}

type Labels = { proxy_id: string; method: string; status_class: string };

/** One proxy ID × method × status class. */
interface Series {
  labels: Labels;
  requests: number;
  duration: Observations;
  upstream: Observations;
}

/** Everything counted for one proxy ID. */
interface PerId {
  series: (Series | undefined)[];
  bytesIn: number;
  bytesOut: number;
}

function methodIndex(method: string): number {
  switch (method) {
    case 'GET':
      return 0;
    case 'HEAD':
      return 1;
    case 'POST':
      return 2;
    case 'PUT':
      return 3;
    case 'PATCH':
      return 4;
    case 'DELETE':
      return 5;
    case 'OPTIONS':
      return 6;
    default:
      return 7;
  }
}

/** The counts of one proxy. */
class Table {
  readonly ids = new Map<string, PerId>();

  record(s: RequestSample): void {
    let id = this.ids.get(s.proxyId);
    if (id === undefined) {
      id = { series: [], bytesIn: 0, bytesOut: 0 };
      this.ids.set(s.proxyId, id);
    }
    const m = methodIndex(s.method);
    const k = Math.floor(s.status / 100) - 1;
    // Anything outside 1xx–5xx counts as a server error, as it did with prom-client's labels.
    const c = k >= 0 && k <= 4 ? k : 4;
    const i = m * STATUS_CLASSES.length + c;
    let series = id.series[i];
    if (series === undefined) {
      const labels = {
        proxy_id: s.proxyId,
        method: METHODS[m] as string,
        status_class: STATUS_CLASSES[c] as string,
      };
      series = { labels, requests: 0, duration: new Observations(), upstream: new Observations() };
      id.series[i] = series;
    }
    series.requests++;
    series.duration.observe(s.totalSeconds);
    if (!Number.isNaN(s.upstreamSeconds)) series.upstream.observe(s.upstreamSeconds);
    id.bytesIn += s.bytesIn;
    id.bytesOut += s.bytesOut;
  }

  *series(): Generator<Series> {
    for (const id of this.ids.values()) for (const s of id.series) if (s !== undefined) yield s;
  }
}

/**
 * One metric in prom-client's JSON form: what `Registry.getMetricsAsJSON()` returns, what cluster
 * workers send their primary, and what `AggregatorRegistry.aggregate()` sums into a registry.
 */
export interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'histogram' | 'gauge';
  /** How the processes' values add up: counts sum; a state is as good as its worst process's. */
  aggregator: 'sum' | 'min';
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

function histogramValues(
  name: string,
  table: Table,
  pick: (s: Series) => Observations,
): MetricJson['values'] {
  const out: MetricJson['values'] = [];
  for (const s of table.series()) {
    const o = pick(s);
    // prom-client creates a series on its first observation; the upstream one may have none.
    if (o.count === 0) continue;
    let cumulative = 0;
    for (let i = 0; i < BUCKETS.length; i++) {
      cumulative += o.buckets[i] as number;
      out.push({
        labels: { le: BUCKETS[i] as number, ...s.labels },
        value: cumulative,
        metricName: `${name}_bucket`,
      });
    }
    out.push({ labels: { le: '+Inf', ...s.labels }, value: o.count, metricName: `${name}_bucket` });
    out.push({ labels: s.labels, value: o.sum, metricName: `${name}_sum` });
    out.push({ labels: s.labels, value: o.count, metricName: `${name}_count` });
  }
  return out;
}

function bytesValues(table: Table, pick: (id: PerId) => number): MetricJson['values'] {
  const out: MetricJson['values'] = [];
  for (const [proxyId, id] of table.ids)
    if (pick(id) > 0) out.push({ labels: { proxy_id: proxyId }, value: pick(id) });
  return out;
}

function metric(
  name: string,
  help: string,
  type: MetricJson['type'],
  values: MetricJson['values'],
): MetricJson {
  return { name, help, type, aggregator: 'sum', values };
}

/** The metrics of one proxy server. */
export class ProxyMetrics {
  private readonly table = new Table();
  /** Whether the rate limit is shared across processes now; null when it is per process by design. */
  rateLimitShared: boolean | null = null;

  /** `httpParser`: the parser backend this process runs (parser/index.ts). */
  constructor(private readonly httpParser: string) {}

  /** Records one finished request. */
  record(s: RequestSample): void {
    this.table.record(s);
  }

  /** The counts so far, as prom-client metric JSON. */
  toJSON(): MetricJson[] {
    const t = this.table;
    const requestDuration = 'dx_proxy_request_duration_seconds';
    const upstreamDuration = 'dx_proxy_upstream_duration_seconds';
    return [
      metric(
        'dx_proxy_requests_total',
        'Requests answered by the proxy, including its own errors.',
        'counter',
        [...t.series()].map((s) => ({ labels: s.labels, value: s.requests })),
      ),
      metric(
        requestDuration,
        'Time from receiving a request to the end of its response.',
        'histogram',
        histogramValues(requestDuration, t, (s) => s.duration),
      ),
      metric(
        upstreamDuration,
        'Time from sending a request upstream to its response headers.',
        'histogram',
        histogramValues(upstreamDuration, t, (s) => s.upstream),
      ),
      metric(
        'dx_proxy_request_bytes_total',
        'Request body bytes received from clients.',
        'counter',
        bytesValues(t, (id) => id.bytesIn),
      ),
      metric(
        'dx_proxy_response_bytes_total',
        'Response body bytes sent to clients.',
        'counter',
        bytesValues(t, (id) => id.bytesOut),
      ),
      // Summed over cluster workers: how many processes run each backend.
      metric(
        'dx_proxy_http_parser_processes',
        'Proxy processes by the HTTP/1 parser backend they run (builtin or wasm).',
        'gauge',
        [{ labels: { backend: this.httpParser }, value: 1 }],
      ),
      ...(this.rateLimitShared === null
        ? []
        : [
            {
              ...metric(
                'dx_proxy_rate_limit_shared',
                '1 while the rate limit is shared through the database; 0 while this process (over cluster workers: any of them) limits alone because the database is unreachable.',
                'gauge',
                [{ labels: {}, value: this.rateLimitShared ? 1 : 0 }],
              ),
              aggregator: 'min' as const,
            },
          ]),
    ];
  }
}

/** A prom-client registry holding the proxy metrics of one or more processes, summed. */
export function proxyRegistry(processes: MetricJson[][]): Registry {
  return AggregatorRegistry.aggregate(processes);
}
