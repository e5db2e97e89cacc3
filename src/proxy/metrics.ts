// Prometheus metrics of the proxy, per proxy ID (its non-secret prefix), method and status class.
// Requests are counted in plain numbers in a table (no label objects, hashing or validation per
// request, which prom-client's label API costs); the table becomes Prometheus series only when
// /metrics is scraped. The metrics live in a registry passed in, so the API's /metrics can serve
// one registry for both roles, and cluster workers' registries sum up in the primary.
import { Registry, type Metric } from 'prom-client';

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

/** The counts of every proxy in one process that report to the same registry. */
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

type Value = { value: number; labels: Record<string, string | number>; metricName?: string };

/** A metric in prom-client's JSON shape (what `getMetricsAsJSON` and the cluster aggregator use). */
class TableMetric {
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly values: () => Value[],
  ) {}

  async get() {
    const { name, help, type, aggregator } = this;
    return { name, help, type, aggregator, values: this.values() };
  }

  /** Counts are cumulative for the life of the process, like prom-client's own counters. */
  reset(): void {}
}

function histogramValues(name: string, series: Iterable<Series>, pick: (s: Series) => Observations): Value[] {
  const out: Value[] = [];
  for (const s of series) {
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

function bytesValues(table: Table, pick: (id: PerId) => number): Value[] {
  const out: Value[] = [];
  for (const [proxyId, id] of table.ids)
    if (pick(id) > 0) out.push({ labels: { proxy_id: proxyId }, value: pick(id) });
  return out;
}

/** Every proxy in a process that shares a registry adds to the same table (tests build twice). */
const tables = new WeakMap<Registry, Table>();

function tableFor(registry: Registry): Table {
  let table = tables.get(registry);
  if (table !== undefined) return table;
  const t = new Table();
  table = t;
  tables.set(registry, t);
  const metrics = [
    new TableMetric(
      'dx_proxy_requests_total',
      'Requests answered by the proxy, including its own errors.',
      'counter',
      () => [...t.series()].map((s) => ({ labels: s.labels, value: s.requests })),
    ),
    new TableMetric(
      'dx_proxy_request_duration_seconds',
      'Time from receiving a request to the end of its response.',
      'histogram',
      () => histogramValues('dx_proxy_request_duration_seconds', t.series(), (s) => s.duration),
    ),
    new TableMetric(
      'dx_proxy_upstream_duration_seconds',
      'Time from sending a request upstream to its response headers.',
      'histogram',
      () => histogramValues('dx_proxy_upstream_duration_seconds', t.series(), (s) => s.upstream),
    ),
    new TableMetric(
      'dx_proxy_request_bytes_total',
      'Request body bytes received from clients.',
      'counter',
      () => bytesValues(t, (id) => id.bytesIn),
    ),
    new TableMetric('dx_proxy_response_bytes_total', 'Response body bytes sent to clients.', 'counter', () =>
      bytesValues(t, (id) => id.bytesOut),
    ),
  ];
  // The registry takes any object with prom-client's metric shape; its types name only the classes.
  for (const m of metrics) registry.registerMetric(m as unknown as Metric);
  return t;
}

/** The proxy's metric set. */
export class ProxyMetrics {
  private readonly table: Table;

  /** Registers the metrics in `registry` (once per registry; later instances share the counts). */
  constructor(readonly registry: Registry) {
    this.table = tableFor(registry);
  }

  /** Records one finished request. */
  record(s: RequestSample): void {
    this.table.record(s);
  }
}

/** A fresh registry for the proxy when the caller does not share one. */
export function createRegistry(): Registry {
  return new Registry();
}
