// Access tokens of installations, minted with the app's JWT and kept until a minute before they
// expire: one token serves every request of an installation for most of its hour, and a request
// never starts with a token about to lapse. Callers asking at once share one mint.

/** A minted token and its expiry (epoch milliseconds). */
export interface CachedToken {
  token: string;
  expiresAt: number;
}

export interface TokenCacheOptions {
  /** Mints a new token for the key (an installation). */
  mint: (key: string) => Promise<CachedToken>;
  /** Clock in epoch milliseconds (tests pass a fake one). */
  now?: () => number;
  /** How long before expiry a token is replaced; default 60 s. */
  refreshBeforeMs?: number;
}

/** Tokens per key, refreshed `refreshBeforeMs` before `expiresAt`. */
export class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly minting = new Map<string, Promise<CachedToken>>();
  private readonly now: () => number;
  private readonly refreshBeforeMs: number;

  constructor(private readonly options: TokenCacheOptions) {
    this.now = options.now ?? Date.now;
    this.refreshBeforeMs = options.refreshBeforeMs ?? 60_000;
  }

  /**
   * The key's token: the cached one while it has more than `refreshBeforeMs` left, else a new one.
   * `stale` (a token the service refused) is dropped first, unless a newer one replaced it already.
   */
  async get(key: string, stale?: string): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached !== undefined && stale !== undefined && cached.token === stale) this.tokens.delete(key);
    const current = this.tokens.get(key);
    if (current !== undefined && this.now() < current.expiresAt - this.refreshBeforeMs) return current.token;
    let pending = this.minting.get(key);
    if (pending === undefined) {
      pending = this.options.mint(key).finally(() => this.minting.delete(key));
      this.minting.set(key, pending);
    }
    const minted = await pending;
    this.tokens.set(key, minted);
    return minted.token;
  }

  /** Forgets the key's token (the next request mints one). */
  forget(key: string): void {
    this.tokens.delete(key);
  }
}
