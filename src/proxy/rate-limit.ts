// Per-proxy-ID token buckets, in memory of one process. On their own (PROXY_RATE_SYNC_MS=0) they
// are the whole limit: with N cluster workers each worker gets rate/N (connections are spread round
// robin), so one host stays near the configured rate. shared-rate.ts keeps them in step with a
// bucket per ID in the database, so that the limit holds across processes and hosts.

/**
 * The rate limit per proxy ID: the one in this process's memory, or one shared by every proxy
 * process (shared-rate.ts). Synchronous, so a request never waits on a store.
 */
export interface RateLimit {
  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait (for Retry-After). */
  take(key: string): number;
  /** Stops any background work. */
  stop(): void;
}

interface Bucket {
  /** May be negative: a debt to other processes that refill must pay back first. */
  tokens: number;
  /** Last refill, in milliseconds of `now()`. */
  at: number;
}

/** A token-bucket limiter keyed by proxy ID prefix. */
export class RateLimiter implements RateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private perMs: number;

  /**
   * @param rate tokens added per second (0 turns the limiter off)
   * @param burst bucket size
   */
  constructor(
    private refillRate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.perMs = refillRate / 1000;
  }

  /** Tokens added per second. */
  get rate(): number {
    return this.refillRate;
  }

  /** Whether the limiter does anything. */
  get enabled(): boolean {
    return this.refillRate > 0;
  }

  /** Changes the refill rate from now on (tokens earned so far at the old rate are kept). */
  setRate(rate: number): void {
    for (const key of this.buckets.keys()) this.level(key);
    this.refillRate = rate;
    this.perMs = rate / 1000;
  }

  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait (for Retry-After). */
  take(key: string): number {
    if (this.refillRate <= 0) return 0;
    const bucket = this.refilled(key);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillRate));
  }

  /** The tokens of `key` now (a key not seen yet has a full bucket). */
  level(key: string): number {
    return this.refilled(key).tokens;
  }

  /** Sets `key`'s bucket to `tokens` as of `at` (a time of `now()`); later refills start there. */
  set(key: string, tokens: number, at: number): void {
    this.buckets.set(key, { tokens: Math.min(this.burst, tokens), at });
  }

  /** Nothing runs in the background. */
  stop(): void {}

  private refilled(key: string): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
    } else if (now > bucket.at) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    return bucket;
  }
}
