// Per-proxy-ID token buckets, in memory of one process. With N cluster workers each worker gets
// rate/N (connections are spread round robin), so the whole stays near the configured rate.

/**
 * The rate limit per proxy ID as the admission checks use it: the one in this process's memory
 * today, or one shared by every proxy process.
 */
export interface RateLimit {
  /** Takes one request for `key`; returns 0 when allowed, else the seconds to wait (Retry-After). */
  take(key: string): number;
}

interface Bucket {
  tokens: number;
  /** Last refill, in milliseconds of `now()`. */
  at: number;
}

/** A token-bucket limiter keyed by proxy ID prefix. */
export class RateLimiter implements RateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  /**
   * @param rate tokens added per second (0 turns the limiter off)
   * @param burst bucket size
   */
  constructor(
    readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.perMs = rate / 1000;
  }

  /** Whether the limiter does anything. */
  get enabled(): boolean {
    return this.rate > 0;
  }

  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait (for Retry-After). */
  take(key: string): number {
    if (this.rate <= 0) return 0;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate));
  }
}
