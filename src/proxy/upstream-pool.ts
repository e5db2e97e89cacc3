// The keep-alive pool of upstream connections: at most PROXY_UPSTREAM_CONNECTIONS, idle ones reused
// most recent first, exchanges waiting in order when all are busy, and one timer for every
// connection's timeouts.
import { timeMs } from './clock.js';
import { UpstreamConnection, type UpstreamHome } from './upstream.js';
import type { UpstreamUser } from './upstream-user.js';

/** Settings of the pool. */
export interface UpstreamPoolOptions {
  url: URL;
  connections: number;
  connectTimeoutMs: number;
  /** Longest silence of the upstream while a response is awaited or streams. */
  timeoutMs: number;
}

/** The keep-alive pool: at most `connections` connections, idle ones reused most recent first. */
export class UpstreamPool implements UpstreamHome {
  private readonly idle: UpstreamConnection[] = [];
  private readonly all = new Set<UpstreamConnection>();
  private readonly waiting: UpstreamUser[] = [];
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;
  private onEmpty: (() => void) | null = null;

  constructor(private readonly options: UpstreamPoolOptions) {
    // One timer for every connection's timeouts instead of one per request.
    const every = Math.min(
      1000,
      Math.max(10, Math.floor(Math.min(options.timeoutMs, options.connectTimeoutMs) / 10)),
    );
    this.sweeper = setInterval(this.sweep, every);
    this.sweeper.unref();
  }

  /** Gets `user` a connection: an idle one, a new one, or the next one freed. */
  acquire(user: UpstreamUser): void {
    if (this.closing) {
      user.onUpstreamError('PROXY_CLOSING', false, false);
      return;
    }
    const now = timeMs();
    let conn = this.idle.pop();
    while (conn !== undefined && (conn.phase !== 'idle' || conn.expiresAt <= now)) {
      conn.destroy();
      conn = this.idle.pop();
    }
    if (conn !== undefined) {
      conn.assign(user);
      return;
    }
    if (this.all.size < this.options.connections) {
      const fresh = new UpstreamConnection(this, this.options.url);
      this.all.add(fresh);
      fresh.assign(user);
      return;
    }
    this.waiting.push(user);
  }

  /** Withdraws a user still waiting for a connection (its client went away). */
  cancel(user: UpstreamUser): void {
    const i = this.waiting.indexOf(user);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** A connection finished an exchange and may be reused. */
  release(conn: UpstreamConnection): void {
    if (this.closing) {
      conn.destroy();
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) {
      conn.assign(next);
      return;
    }
    conn.socket.unref();
    this.idle.push(conn);
  }

  /** A connection closed: forget it, and open another for whoever waits. */
  forget(conn: UpstreamConnection): void {
    if (!this.all.delete(conn)) return;
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    if (this.all.size === 0 && this.onEmpty !== null) this.onEmpty();
    const next = this.waiting.shift();
    if (next !== undefined) this.acquire(next);
  }

  /** Closes idle connections now and busy ones when their exchange ends; resolves when all are closed. */
  close(): Promise<void> {
    this.closing = true;
    for (const conn of this.idle.splice(0)) conn.destroy();
    for (const user of this.waiting.splice(0)) user.onUpstreamError('PROXY_CLOSING', false, false);
    return this.whenEmpty();
  }

  /** Closes every connection at once. */
  destroy(): Promise<void> {
    this.closing = true;
    for (const user of this.waiting.splice(0)) user.onUpstreamError('PROXY_CLOSING', false, false);
    for (const conn of [...this.all]) conn.fail('PROXY_CLOSING');
    return this.whenEmpty();
  }

  private whenEmpty(): Promise<void> {
    clearInterval(this.sweeper);
    if (this.all.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.onEmpty = resolve));
  }

  private readonly sweep = (): void => {
    const now = timeMs();
    const { connectTimeoutMs, timeoutMs } = this.options;
    for (const conn of this.all) {
      switch (conn.phase) {
        case 'idle':
          if (conn.expiresAt <= now) conn.destroy();
          break;
        case 'connecting':
          if (now - conn.startedAt > connectTimeoutMs) conn.fail('CONNECT_TIMEOUT', true);
          break;
        case 'busy':
          // Once the request is sent, the upstream may not go silent (unless we paused it).
          if (conn.requestSent && !conn.paused && now - conn.lastActive > timeoutMs)
            conn.fail('UPSTREAM_TIMEOUT', true);
          break;
        case 'closed':
          break;
        default: {
          const unhandled: never = conn.phase;
          throw new Error(`unhandled upstream phase ${String(unhandled)}`);
        }
      }
    }
  };
}
