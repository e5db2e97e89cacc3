// The servers the proxy part compares: the upstream alone, nginx in front of it, and our proxy in
// front of it (this build, and optionally another build for before/after figures).
import { join } from 'node:path';
import { startNginx } from './lib/nginx.js';
import { childrenOf, rssMb } from './lib/procfs.js';
import { spawnServer, stop } from './lib/spawn.js';

/** Something the load generator can be pointed at. */
export interface Target {
  name: string;
  url: string;
  /** Headers every request to it carries. */
  headers: Record<string, string>;
  /** Processes whose CPU time is the target's cost (empty for the upstream called directly). */
  pids(): number[];
  /** Resident memory of those processes right after start, in MiB (NaN for direct). */
  startRssMb: number;
  stop(): Promise<void>;
}

const rssOf = (pids: number[]) => pids.reduce((sum, pid) => sum + rssMb(pid), 0);

/** Starts the development upstream in its minimal (fixed-answer) mode. */
export async function startUpstream(dist: string) {
  return spawnServer(process.execPath, [
    join(dist, 'test/support/dev-upstream.js'),
    '--port',
    '0',
    '--minimal',
  ]);
}

/** The upstream called directly: the floor every proxy adds to. */
export function directTarget(url: string, auth: string): Target {
  return {
    name: 'direct',
    url,
    headers: { authorization: auth },
    pids: () => [],
    startRssMb: NaN,
    stop: async () => {},
  };
}

/** nginx as a reverse proxy of the upstream with `workers` worker processes. */
export async function nginxTarget(dir: string, upstreamUrl: string, workers: number, auth: string) {
  const nginx = await startNginx(dir, upstreamUrl, workers);
  const target: Target = {
    name: `nginx ${nginx.version} (${workers} worker${workers > 1 ? 's' : ''})`,
    url: nginx.url,
    headers: { authorization: auth },
    pids: () => [nginx.child.pid as number, ...nginx.workers()],
    startRssMb: 0,
    stop: () => stop(nginx.child),
  };
  target.startRssMb = rssOf(target.pids());
  return target;
}

/** What a proxy target needs. */
export interface ProxyTargetOptions {
  /** The compiled tree to run it from (another build's `dist/` gives before/after figures). */
  dist: string;
  label: string;
  workers: number;
  upstreamUrl: string;
  databaseUrl: string;
  dataDir: string;
  /** Where its access log (stdout) goes. */
  logFile: string;
  headers: Record<string, string>;
  /** PROXY_HTTP_PARSER (builds that predate it ignore it). */
  httpParser?: string;
}

/** Our proxy as `serve --role proxy` runs it, in its own process (and its cluster workers). */
export async function proxyTarget(o: ProxyTargetOptions): Promise<Target> {
  const proxy = await spawnServer(process.execPath, [join(o.dist, 'bench/proxy-server.js')], {
    stdoutFile: o.logFile,
    env: {
      ROLES: 'proxy',
      HOST: '127.0.0.1',
      PROXY_PORT: '0',
      UPSTREAM_URL: o.upstreamUrl,
      DATABASE_URL: o.databaseUrl,
      DATA_DIR: o.dataDir,
      PROXY_WORKERS: String(o.workers),
      LOG_LEVEL: 'info',
      ...(o.httpParser === undefined ? {} : { PROXY_HTTP_PARSER: o.httpParser }),
    },
  });
  const pid = proxy.child.pid as number;
  return {
    name: `${o.label} (${o.workers} worker${o.workers > 1 ? 's' : ''})`,
    url: proxy.url,
    headers: o.headers,
    // With one worker the primary serves; with several it only supervises, but count it anyway.
    pids: () => [pid, ...childrenOf(pid)],
    startRssMb: rssOf([pid, ...childrenOf(pid)]),
    stop: () => stop(proxy.child),
  };
}

/** The floor: node:http + undici with none of the proxy's work (bench/floor-proxy.ts). */
export async function floorTarget(dist: string, upstreamUrl: string, auth: string): Promise<Target> {
  const floor = await spawnServer(process.execPath, [join(dist, 'bench/floor-proxy.js'), upstreamUrl]);
  const pid = floor.child.pid as number;
  return {
    name: 'node:http + undici floor (1 worker)',
    url: floor.url,
    headers: { authorization: auth },
    pids: () => [pid],
    startRssMb: rssOf([pid]),
    stop: () => stop(floor.child),
  };
}
