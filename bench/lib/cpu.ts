// CPU time spent on a piece of work: by processes of the suite (the service, its workers), read
// from /proc/<pid>/stat, and by the PostgreSQL server processes (backends) that serve one client's
// connections. Those are found by application_name: the client runs with PGAPPNAME=<tag> (which
// node-postgres and psql both honour), pg_stat_activity names their backends, and their CPU is
// read from /proc (the server runs on this machine). Only the client's own backends count: the
// server's background processes (WAL writer, checkpointer, autovacuum) and the backends of other
// users of the same server (a test run) are left out.
import pg from 'pg';
import { cpuMs, totalCpuMs } from './procfs.js';

/** Backends are looked up this often while measuring, and their CPU read this often. */
const REFRESH_MS = 250;
const SAMPLE_MS = 50;

/**
 * Sums the CPU of the backends whose application_name is `tag` between start() and stop(). A
 * backend that ends within the window counts up to its last sample (at most SAMPLE_MS short); a
 * backend that starts within it counts whole.
 */
export class BackendCpu {
  private readonly base = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly client: pg.Client;
  private timers: NodeJS.Timeout[] = [];
  private refreshing: Promise<void> = Promise.resolve();
  /** False when a backend's /proc entry cannot be read (the server runs elsewhere). */
  private readable = true;

  private constructor(
    url: string,
    private readonly tag: string,
  ) {
    this.client = new pg.Client({ connectionString: url, application_name: 'dx-bench-monitor' });
  }

  /** Starts measuring: the backends alive now count from their current CPU. */
  static async start(url: string, tag: string): Promise<BackendCpu> {
    const meter = new BackendCpu(url, tag);
    await meter.client.connect();
    // The monitor's own backend shows whether the server's processes are this machine's.
    const own = await meter.client.query<{ pid: number }>('select pg_backend_pid() as pid');
    meter.readable = meter.read(own.rows[0]?.pid ?? -1) !== null;
    await meter.refresh(true);
    meter.timers = [
      setInterval(() => {
        meter.refreshing = meter.refreshing.then(() => meter.refresh(false)).catch(() => undefined);
      }, REFRESH_MS),
      setInterval(() => meter.sample(), SAMPLE_MS),
    ];
    return meter;
  }

  /** Stops measuring; returns the backends' CPU over the window in ms, or NaN when unreadable. */
  async stop(): Promise<number> {
    for (const t of this.timers) clearInterval(t);
    await this.refreshing;
    try {
      await this.refresh(false);
    } finally {
      await this.client.end();
    }
    let total = 0;
    for (const [pid, last] of this.last) total += last - (this.base.get(pid) ?? 0);
    return this.readable ? total : NaN;
  }

  private async refresh(atStart: boolean): Promise<void> {
    const { rows } = await this.client.query<{ pid: number }>(
      'select pid from pg_stat_activity where application_name = $1',
      [this.tag],
    );
    for (const { pid } of rows) {
      if (this.last.has(pid)) continue;
      const now = this.read(pid);
      if (now === null) continue;
      this.base.set(pid, atStart ? now : 0);
      this.last.set(pid, now);
    }
    this.sample();
  }

  private sample(): void {
    for (const pid of this.last.keys()) {
      const now = this.read(pid);
      if (now !== null) this.last.set(pid, now);
    }
  }

  private read(pid: number): number | null {
    try {
      return cpuMs(pid);
    } catch {
      // Ended since the last look (its last sample stands), or not on this machine.
      return null;
    }
  }
}

/** CPU spent on one piece of work, in ms. */
export interface CpuSpent {
  /** The suite's processes measured (the service's). */
  processMs: number;
  /** The PostgreSQL backends of the tag; null when no tag was given (SQLite), NaN when unreadable. */
  databaseMs: number | null;
}

/** Runs `fn` and returns its result with the CPU that `pids` and the backends of `pgTag` spent. */
export async function cpuWhile<T>(
  pids: readonly number[],
  pg: { url: string; tag: string } | null,
  fn: () => Promise<T>,
): Promise<[T, CpuSpent]> {
  const backends = pg === null ? null : await BackendCpu.start(pg.url, pg.tag);
  const before = totalCpuMs(pids);
  let value: T;
  try {
    value = await fn();
  } catch (err) {
    await backends?.stop().catch(() => undefined);
    throw err;
  }
  const processMs = totalCpuMs(pids) - before;
  const databaseMs = backends === null ? null : await backends.stop();
  return [value, { processMs, databaseMs }];
}
