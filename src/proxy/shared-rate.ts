// A rate limit that holds across processes without a round trip per request. Each process admits
// from its own token buckets (rate-limit.ts) and, every PROXY_RATE_SYNC_MS while requests come,
// reports to a shared bucket per proxy ID (shared-rate-store.ts) what it let through since its last
// report, and takes the shared bucket's level back as its own. Between two reports a process knows
// nothing of the others, so N processes may together admit up to (N − 1) × (burst + rate × sync
// interval) more than one bucket would; the shared bucket then goes into debt (negative tokens)
// and every process waits until refill has paid it back, so over longer windows the rate holds.
// When the store stops answering, each process falls back to its own bucket at its share of the
// rate: a per-process limit, never no limit and never a refusal of everything.
import type { ProxyConfig } from '../config.js';
import type { Logger } from '../lib/logger.js';
import { timeMs } from './clock.js';
import type { ProxyMetrics } from './metrics.js';
import { RateLimiter, type RateLimit } from './rate-limit.js';

/** Where the buckets of every process meet. */
export interface RateStore {
  /**
   * Refills each key's shared bucket at `rate` per second (up to `burst`; a new key starts full)
   * until `wallMs`, takes the key's count of admitted requests from it, and returns each key's
   * tokens after that (negative when the processes together admitted more than it held).
   */
  settle(
    counts: ReadonlyMap<string, number>,
    rate: number,
    burst: number,
    wallMs: number,
  ): Promise<Map<string, number>>;
}

/** What a SharedRateLimiter is told and given. */
export interface SharedRateOptions {
  /** Requests per second per key, for all processes together. */
  rate: number;
  burst: number;
  /** Share of `rate` this process enforces alone while the store is unreachable (1 / workers). */
  localShare: number;
  /** Time between two reports to the store. */
  syncMs: number;
  store: RateStore;
  /** Told when sharing stops (with the error) and when it works again. */
  onSharedChange(shared: boolean, err?: unknown): void;
  /** Monotonic milliseconds (local buckets). */
  now: () => number;
  /** Wall-clock milliseconds (the store's buckets, compared across hosts). */
  wallNow?: () => number;
}

/** Consecutive failed reports after which the store counts as unreachable. */
export const FAILURES_FOR_OUTAGE = 3;
/** A report that takes longer than this has failed (a store behind a dropped network never answers). */
export const SETTLE_TIMEOUT_MS = 1000;

/** Token buckets per key, kept in step with the store's; `take` never waits on the store. */
export class SharedRateLimiter implements RateLimit {
  private readonly local: RateLimiter;
  /** Per key touched since the last report: requests admitted (keys refused get 0: their level is read). */
  private counts = new Map<string, number>();
  private isShared = true;
  private failures = 0;
  private settling = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly wallNow: () => number;

  constructor(private readonly o: SharedRateOptions) {
    this.local = new RateLimiter(o.rate, o.burst, o.now);
    this.wallNow = o.wallNow ?? Date.now;
  }

  /** Whether the limit is shared now (false: the store is unreachable, each process limits alone). */
  get shared(): boolean {
    return this.isShared;
  }

  take(key: string): number {
    const wait = this.local.take(key);
    const counted = this.counts.get(key) ?? 0;
    // While the store is unreachable nothing is counted: on its return, no debt from the outage.
    this.counts.set(key, wait === 0 && this.isShared ? counted + 1 : counted);
    return wait;
  }

  /** Starts reporting every `syncMs`. */
  start(): void {
    this.timer ??= setInterval(() => void this.sync(), this.o.syncMs);
    // Reporting alone must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reports the keys touched since the last report and adopts the store's levels (one at a time). */
  async sync(): Promise<void> {
    if (this.settling || this.counts.size === 0) return;
    this.settling = true;
    const counts = this.counts;
    this.counts = new Map();
    const sentAt = this.o.now();
    try {
      const levels = await withTimeout(
        this.o.store.settle(counts, this.o.rate, this.o.burst, this.wallNow()),
        SETTLE_TIMEOUT_MS,
      );
      // The levels are as of `sentAt`; what this process admitted since is still to be reported.
      for (const [key, tokens] of levels) this.local.set(key, tokens - (this.counts.get(key) ?? 0), sentAt);
      this.failures = 0;
      if (!this.isShared) this.changeShared(true);
    } catch (err) {
      this.failures++;
      if (this.isShared && this.failures >= FAILURES_FOR_OUTAGE) this.changeShared(false, err);
      // A report that timed out may still be applied, so its counts are not sent again (at worst
      // they go uncounted); its keys are, to learn their levels or to see the store return.
      for (const key of counts.keys()) if (!this.counts.has(key)) this.counts.set(key, 0);
      // No debt from an outage: what was admitted meanwhile was limited per process.
      if (!this.isShared) for (const key of this.counts.keys()) this.counts.set(key, 0);
    } finally {
      this.settling = false;
    }
  }

  private changeShared(shared: boolean, err?: unknown): void {
    this.isShared = shared;
    this.local.setRate(shared ? this.o.rate : this.o.rate * this.o.localShare);
    this.o.onSharedChange(shared, err);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the rate-limit store did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The proxy's rate limit as configured: shared through `deps.rateStore` when there is one and
 * PROXY_RATE_SYNC_MS is not 0, else each process's own buckets at its share of the rate.
 */
export function createRateLimit(
  p: Pick<ProxyConfig, 'rateLimit' | 'rateBurst' | 'rateSyncMs'>,
  deps: { rateShare?: number; rateStore?: RateStore },
  logger: Logger,
  metrics: Pick<ProxyMetrics, 'rateLimitShared'>,
): RateLimit {
  const share = deps.rateShare ?? 1;
  if (deps.rateStore === undefined || p.rateSyncMs === 0 || p.rateLimit === 0)
    return new RateLimiter(p.rateLimit * share, p.rateBurst, timeMs);
  metrics.rateLimitShared = true;
  const limiter = new SharedRateLimiter({
    rate: p.rateLimit,
    burst: p.rateBurst,
    localShare: share,
    syncMs: p.rateSyncMs,
    store: deps.rateStore,
    now: timeMs,
    onSharedChange: (shared, err) => {
      metrics.rateLimitShared = shared;
      if (shared) logger.info('rate-limit store reachable again: the rate limit is shared across processes');
      else
        logger.warn(
          { err },
          'rate-limit store unreachable: each proxy process limits alone (its share of PROXY_RATE_LIMIT) until it answers',
        );
    },
  });
  limiter.start();
  return limiter;
}
