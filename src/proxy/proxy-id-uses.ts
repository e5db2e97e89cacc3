// "Last used" of proxy IDs: each proxy process writes, for every ID it admits a request with, the
// time of use at most once a minute (per ID and process), so an ID's last use is right to the
// minute while a busy client adds no write per request. The write runs beside the request, never
// in its way: the request is forwarded whether it is done, slow or failed; a failure is logged
// at warn (by the ID's prefix, never the ID) and the next try comes a minute later.
import type { ProxyIdStore } from '../domain/identity/proxy-ids.js';
import type { Logger } from '../lib/logger.js';

/** How often at most one process writes one ID's use. */
export const PROXY_ID_USE_EVERY_MS = 60_000;

export interface ProxyIdUsesOptions {
  everyMs?: number;
  /** Milliseconds; any monotonic or wall clock. */
  now?: () => number;
}

/** The proxy process's record of its IDs' uses. */
export class ProxyIdUses {
  /** Prefix → when its use was last written (or tried). Bounded by the IDs ever admitted. */
  private readonly written = new Map<string, number>();
  private readonly everyMs: number;
  private readonly now: () => number;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: Pick<ProxyIdStore, 'recordUse'>,
    private readonly logger: Pick<Logger, 'warn'>,
    options: ProxyIdUsesOptions = {},
  ) {
    this.everyMs = options.everyMs ?? PROXY_ID_USE_EVERY_MS;
    this.now = options.now ?? Date.now;
  }

  /** Notes a request admitted with the ID of `prefix`; synchronous, and never throws. */
  note(prefix: string): void {
    const now = this.now();
    if (now - (this.written.get(prefix) ?? -Infinity) < this.everyMs) return;
    // Set before the write: a failing database is tried again a minute later, not per request.
    this.written.set(prefix, now);
    const failed = (err: unknown) => {
      this.logger.warn({ err, proxyId: prefix }, "recording the proxy ID's last use failed");
    };
    let settled: Promise<void>;
    try {
      settled = this.store.recordUse(prefix).then(() => undefined, failed);
    } catch (err) {
      failed(err);
      return;
    }
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
  }

  /** Waits for the writes under way (shutdown, before the database closes). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
