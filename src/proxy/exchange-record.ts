// What the proxy logs and counts about one exchange: times, bytes, status and the reason it ended
// early. The Exchange (forward.ts) extends it, so a forwarded request is still one object.
import { withoutQueryValues } from '../lib/redact.js';
import { ms, type AccessLog, type AccessLogEntry } from './access-log.js';
import { timeMs } from './clock.js';
import { UNKNOWN_PROXY_ID, type ProxyMetrics } from './metrics.js';

/** Status recorded when the client closed the connection before the response was complete. */
export const CLIENT_CLOSED = 499;

/** The facts about an exchange that end up in its access-log line and the metrics. */
export class ExchangeRecord {
  /** The proxy ID's non-secret prefix once known. */
  proxyId = UNKNOWN_PROXY_ID;
  protected readonly startedAt = timeMs();
  protected status = 0;
  protected bytesIn = 0;
  protected bytesOut = 0;
  /** When it asked for an upstream connection, and how long the response head took after. */
  protected upstreamStart = 0;
  protected upstreamMs = -1;
  /** Why the proxy answered itself or cut the exchange short, when it did. */
  protected error: string | undefined;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly traceId: string,
  ) {}

  /** Counts the exchange and writes its access-log line (once, when it ends). */
  protected report(metrics: Pick<ProxyMetrics, 'record'>, accessLog: Pick<AccessLog, 'write'>): void {
    const totalMs = timeMs() - this.startedAt;
    metrics.record({
      proxyId: this.proxyId,
      method: this.method,
      status: this.status,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      upstreamSeconds: this.upstreamMs < 0 ? NaN : this.upstreamMs / 1000,
      totalSeconds: totalMs / 1000,
    });
    const entry: AccessLogEntry = {
      reqId: this.traceId,
      proxyId: this.proxyId,
      method: this.method,
      path: withoutQueryValues(this.url),
      status: this.status,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      upstreamMs: this.upstreamMs < 0 ? null : ms(this.upstreamMs),
      totalMs: ms(totalMs),
    };
    // Named only when there is one, without spreading a throwaway object per request.
    if (this.error !== undefined) entry.error = this.error;
    accessLog.write(entry);
  }
}
