// How many PostgreSQL connections a process opens: its one pool (DATABASE_POOL_SIZE), plus one per
// proxy cluster worker. The variable is declared with the others in config.ts; how it must relate
// to the work that holds connections for long stretches is checked here. deploy/README.md sums
// these figures over the processes of a deployment against the server's max_connections.

/** Connections of a proxy cluster worker's own pool: it reloads the proxy IDs (concurrent reloads
 * share one query) and settles the shared rate limit (one report at a time), short queries both. */
export const PROXY_WORKER_POOL_SIZE = 1;

/** What the connection figures of one process depend on: the fields of config.ts's Config. */
export interface PoolVars {
  /** The roles of the process (Role; plain strings keep this module below config.ts). */
  roles: readonly string[];
  databasePoolSize: number;
  workerConcurrency: number;
  exportDownloadsMax: number;
  proxy: { workers: number };
}

/**
 * The most connections one `dx serve` process opens to PostgreSQL: the pool every process has,
 * and with `PROXY_WORKERS` > 1 the pool of each forked proxy worker. Pools open connections as
 * work needs them and close them after 10 s idle, so this is a ceiling, not a constant.
 */
export function connectionsPerProcess(v: PoolVars): number {
  const proxyCluster = v.roles.includes('proxy') && v.proxy.workers > 1 ? v.proxy.workers : 0;
  return v.databasePoolSize + proxyCluster * PROXY_WORKER_POOL_SIZE;
}

/**
 * Connections the process's own work holds for minutes: one per running load (its COPY) and one
 * per export download being streamed. The pool must have at least one more, or heartbeats, claims
 * and every API request wait behind them (a load's lease would lapse while it waits).
 */
export function longHeldConnections(v: PoolVars): number {
  return (
    (v.roles.includes('worker') ? v.workerConcurrency : 0) +
    (v.roles.includes('api') ? v.exportDownloadsMax : 0)
  );
}

/** The problem with DATABASE_POOL_SIZE for these roles, or null when it leaves room. */
export function poolSizeProblem(v: PoolVars): string | null {
  const held = longHeldConnections(v);
  if (v.databasePoolSize > held) return null;
  const parts = [
    ...(v.roles.includes('worker') ? [`WORKER_CONCURRENCY loads (${v.workerConcurrency})`] : []),
    ...(v.roles.includes('api') ? [`EXPORT_DOWNLOADS_MAX downloads (${v.exportDownloadsMax})`] : []),
  ];
  return (
    `DATABASE_POOL_SIZE: ${v.databasePoolSize} leaves no connection for other queries while ` +
    `${parts.join(' and ')} each hold one; set it to at least ${held + 1}`
  );
}
