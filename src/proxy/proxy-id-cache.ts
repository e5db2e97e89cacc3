// The set of active proxy IDs, held in memory so a request's X-PROXYVID check costs no database
// round trip. Reloaded on a timer, and on a miss at most once per `missRefreshMs`, so a newly
// created ID works at once while a stream of unknown IDs cannot hammer the database.
import { hashProxyId, looksLikeProxyId, type ProxyIdStore } from '../domain/identity/proxy-ids.js';

/** Options of the cache; times in milliseconds. */
export interface ProxyIdCacheOptions {
  refreshMs: number;
  /** Least time between two refreshes caused by unknown IDs. */
  missRefreshMs?: number;
  /** Called when a reload fails; the previous set stays in force. */
  onError?: (err: unknown) => void;
  now?: () => number;
}

/** The in-memory view of the active proxy IDs. */
export class ProxyIdCache {
  /** sha256 hex of each active ID → its non-secret prefix. */
  private byHash = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> | null = null;
  private lastMissRefresh = -Infinity;
  private loaded = false;
  private loads = 0;
  private readonly missRefreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Pick<ProxyIdStore, 'active'>,
    private readonly options: ProxyIdCacheOptions,
  ) {
    this.missRefreshMs = options.missRefreshMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /** Loads the set once and starts the periodic reload. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.options.refreshMs);
    // The reload alone must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /** Stops the periodic reload. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Changes whenever the set is replaced: a lookup's answer holds while it stays the same. */
  get generation(): number {
    return this.loads;
  }

  /** Whether the set has been loaded at least once (readiness). */
  get ready(): boolean {
    return this.loaded;
  }

  /**
   * The prefix of the active ID `id`, or undefined. Synchronous: hashes and looks up in memory.
   * Comparing sha256 digests (not the IDs) keeps lookup timing independent of the secret.
   */
  lookup(id: string): string | undefined {
    if (!looksLikeProxyId(id)) return undefined;
    return this.byHash.get(hashProxyId(id));
  }

  /** Like `lookup`, but on a miss reloads the set first when the last miss-reload is old enough. */
  async lookupOrRefresh(id: string): Promise<string | undefined> {
    if (!looksLikeProxyId(id)) return undefined;
    const digest = hashProxyId(id);
    const hit = this.byHash.get(digest);
    if (hit !== undefined) return hit;
    const now = this.now();
    if (now - this.lastMissRefresh < this.missRefreshMs) return undefined;
    this.lastMissRefresh = now;
    try {
      await this.refresh();
    } catch {
      return undefined;
    }
    return this.byHash.get(digest);
  }

  /** Reloads the set now (concurrent callers share one query). */
  refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    try {
      const rows = await this.store.active();
      const next = new Map<string, string>();
      for (const row of rows) next.set(row.hash, row.prefix);
      // Swapped whole, so a request never sees a half-built set.
      this.byHash = next;
      this.loads++;
      this.loaded = true;
    } catch (err) {
      this.options.onError?.(err);
      throw err;
    }
  }
}
