// Instructions per request of our proxy and of nginx, counted by valgrind's callgrind: unlike
// requests/s or CPU time, a count of executed instructions does not change with the machine's load,
// so a change of a few percent shows on a busy shared machine. Each server runs alone under
// callgrind (one process: our proxy with one worker, nginx with `master_process off`); after a
// warm-up, a fixed number of requests is sent and the instructions of that span alone are read from
// callgrind's dump. User-space instructions only (the kernel's share of a request is not counted;
// strace shows both sides make the same syscalls per request).
//
// Usage: node dist/bench/proxy-instructions.js [--requests N] [--connections C] [--stream-mb M]
//        [--targets ours,nginx,label=dist-dir…]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/storage/db/database.js';
import { migrateToLatest } from '../src/storage/db/migrate.js';
import { SqlProxyIdStore } from '../src/domain/identity/proxy-ids.js';
import { download } from './lib/download.js';
import { freePort, waitForPort } from './lib/net.js';
import { nginxConfig } from './lib/nginx.js';
import { run, spawnServer, stop, type Spawned } from './lib/spawn.js';
import { commandPath, hasCommand } from './lib/tools.js';
import { startUpstream } from './proxy-targets.js';

const AUTH = `Basic ${Buffer.from('benchApp:0123456789abcdef|1').toString('base64')}`;

/** Instructions counted for one target. */
export interface InstructionRow {
  target: string;
  /** Per GET at `connections` connections. */
  perGet: number;
  /** Per 1 KB POST. */
  perPost: number;
  /** Per MiB of one large streamed answer. */
  perStreamMb: number;
}

/** Whether callgrind (valgrind) is there to count instructions. */
export const canCountInstructions = (): boolean => hasCommand('valgrind') && hasCommand('callgrind_control');

interface Counted {
  child: Spawned['child'];
  url: string;
  dir: string;
  /** $HOST in the process's environment. */
  host: string | undefined;
  /** Dumps taken so far (callgrind numbers them from 1). */
  dumps: number;
}

/** Instructions of one dump: all threads, and the main thread alone (JavaScript, I/O callbacks). */
interface DumpCount {
  total: number;
  main: number;
}

/**
 * The counts of callgrind dump number `n` of process `pid`, one file per thread (`-01` is the
 * main thread; the others are V8's compilers, garbage collector and libuv's pool). An idle process
 * takes the dump command only when it next wakes.
 */
async function dumpTotal(c: Counted, pid: number, n: number): Promise<DumpCount> {
  const { dir } = c;
  const prefix = `cg.${pid}.${n}-`;
  const totalOf = (file: string): number | null => {
    const m = /^(?:totals|summary):\s+(\d+)/m.exec(readFileSync(join(dir, file), 'utf8'));
    return m === null ? null : Number(m[1]);
  };
  for (let waited = 0; ; waited += 100) {
    // A connection opened and closed wakes an idle server (a few thousand instructions).
    if (waited % 1000 === 500) poke(c.url);
    const files = readdirSync(dir).filter((f) => f.startsWith(prefix));
    // The threads' files are written one after another: read them once the last is complete.
    const counts = files.map(totalOf);
    if (files.length > 0 && waited >= 300 && counts.every((x) => x !== null)) {
      let total = 0;
      let main = 0;
      files.forEach((f, i) => {
        const x = counts[i] ?? 0;
        total += x;
        if (f === `${prefix}01`) main = x;
      });
      return { total, main };
    }
    if (waited > 60_000) throw new Error(`no complete ${prefix}*: ${readdirSync(dir).join(' ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function poke(url: string): void {
  const { hostname, port } = new URL(url);
  const socket = createConnection({ host: hostname, port: Number(port) });
  socket.on('connect', () => socket.end()).on('error', () => socket.destroy());
}

/** Dumps (and zeroes) the counters of the callgrind process `pid`; returns the dump's total. */
function dump(c: Counted): Promise<DumpCount> {
  const pid = c.child.pid as number;
  const r = spawnSync('callgrind_control', [`--vgdb-prefix=${join(c.dir, 'vgdb')}`, '-d', String(pid)], {
    encoding: 'utf8',
    // vgdb names its pipes after $USER and $HOST: the same as the process's (the proxy's HOST).
    env: { ...process.env, HOST: c.host },
  });
  if (process.env.DEBUG_CG) console.error(r.stdout, r.stderr);
  if (r.status !== 0) throw new Error(`callgrind_control failed: ${r.stderr}${r.stdout}`);
  c.dumps += 1;
  return dumpTotal(c, pid, c.dumps);
}

const valgrindArgs = (dir: string) => [
  '--tool=callgrind',
  // One count per thread: the main thread's repeats between runs far better than the compilers'.
  '--separate-threads=yes',
  `--callgrind-out-file=${join(dir, 'cg.%p')}`,
  `--log-file=${join(dir, 'valgrind.log')}`,
  // callgrind_control reaches the process through these pipes; kept out of /tmp's shared names.
  `--vgdb-prefix=${join(dir, 'vgdb')}`,
];

async function countedProxy(
  dist: string,
  dir: string,
  upstreamUrl: string,
  databaseUrl: string,
): Promise<Counted> {
  const proxy = await spawnServer(
    'valgrind',
    [...valgrindArgs(dir), process.execPath, join(dist, 'bench/proxy-server.js')],
    {
      stdoutFile: join(dir, 'access.log'),
      timeoutMs: 1_200_000,
      env: {
        ROLES: 'proxy',
        HOST: '127.0.0.1',
        PROXY_PORT: '0',
        UPSTREAM_URL: upstreamUrl,
        DATABASE_URL: databaseUrl,
        DATA_DIR: dir,
        PROXY_WORKERS: '1',
        LOG_LEVEL: 'info',
      },
    },
  );
  return { child: proxy.child, url: proxy.url, dir, host: '127.0.0.1', dumps: 0 };
}

async function countedNginx(dir: string, upstreamUrl: string): Promise<Counted> {
  const bin = commandPath('nginx');
  if (bin === null) throw new Error('nginx is not installed');
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `master_process off;\n${nginxConfig(dir, port, new URL(upstreamUrl), 1)}`);
  const child = spawn('valgrind', [...valgrindArgs(dir), bin, '-p', dir, '-c', conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  await waitForPort(port, 120_000);
  return { child, url: `http://127.0.0.1:${port}`, dir, host: process.env.HOST, dumps: 0 };
}

/** Sends exactly `amount` requests over `connections` keep-alive connections. */
async function load(
  url: string,
  amount: number,
  connections: number,
  headers: Record<string, string>,
  body?: string,
) {
  // Resolved like an import, so a copy of dist/ anywhere under the checkout finds it too.
  const bin = createRequire(import.meta.url).resolve('autocannon');
  const args = [bin, '--json', '-c', String(connections), '-a', String(amount), '-t', '120'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  if (body !== undefined) args.push('-m', 'POST', '-H', 'content-type=application/json', '-b', body);
  const out = await run(process.execPath, [...args, url], { timeoutMs: 3_600_000 });
  const r = JSON.parse(out) as {
    requests: { total: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  };
  if (r.non2xx + r.errors + r.timeouts > 0)
    throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  return r.requests.total;
}

/** Measures one counted server: GET, POST 1 KB and a streamed answer, each after a warm-up. */
async function measure(
  name: string,
  c: Counted,
  headers: Record<string, string>,
  o: { requests: number; connections: number; streamMb: number },
  log: (m: string) => void,
): Promise<InstructionRow> {
  const get = `${c.url}/v4/echoes?state=DC&limit=10`;
  const post = `${c.url}/v4/echoes`;
  const body = JSON.stringify({ note: 'x'.repeat(1012) });
  const warm = Math.max(2000, Math.floor(o.requests / 4));
  await load(get, warm, o.connections, headers);
  await load(post, warm, o.connections, headers, body);
  await dump(c);
  const n = await load(get, o.requests, o.connections, headers);
  const g = await dump(c);
  const perGet = g.total / n;
  log(`  ${name}: GET ${Math.round(perGet)} instructions/request (main thread ${Math.round(g.main / n)})`);
  const m = await load(post, o.requests, o.connections, headers, body);
  const p = await dump(c);
  const perPost = p.total / m;
  log(
    `  ${name}: POST 1 KB ${Math.round(perPost)} instructions/request (main thread ${Math.round(p.main / m)})`,
  );
  const stream = `${c.url}/v4/stream?bytes=${o.streamMb * 2 ** 20}`;
  await download(stream, headers);
  await dump(c);
  const d = await download(stream, headers);
  const perStreamMb = (await dump(c)).total / (d.bytes / 2 ** 20);
  log(`  ${name}: stream ${Math.round(perStreamMb)} instructions/MiB`);
  return { target: name, perGet, perPost, perStreamMb };
}

/** Counts instructions for each of `targets` (`ours`, `nginx`, or `label=dist-dir`). */
export async function countInstructions(
  dist: string,
  targets: string[],
  o: { requests: number; connections: number; streamMb: number },
  log: (m: string) => void = (m) => console.error(m),
): Promise<InstructionRow[]> {
  const tmp = mkdtempSync(join(tmpdir(), 'dx-instr-'));
  chmodSync(tmp, 0o755);
  const databaseUrl = `sqlite:${join(tmp, 'proxy.sqlite')}`;
  const database = await openDatabase(databaseUrl);
  await migrateToLatest(database);
  const { id } = await new SqlProxyIdStore(database.db).create('bench');
  await database.close();
  const upstream = await startUpstream(dist);
  const rows: InstructionRow[] = [];
  try {
    for (const t of targets) {
      const dir = mkdtempSync(join(tmp, 'target-'));
      chmodSync(dir, 0o755);
      const [label, other] = t.includes('=') ? (t.split('=') as [string, string]) : [t, dist];
      const nginx = label === 'nginx';
      log(`${label}: starting under callgrind…`);
      const c = nginx
        ? await countedNginx(dir, upstream.url)
        : await countedProxy(other, dir, upstream.url, databaseUrl);
      try {
        const headers: Record<string, string> = nginx
          ? { authorization: AUTH }
          : { authorization: AUTH, 'x-proxyvid': id };
        rows.push(await measure(label, c, headers, o, log));
      } finally {
        await stop(c.child, 30_000);
      }
    }
  } finally {
    await stop(upstream.child);
    if (process.env.KEEP_TMP === undefined) rmSync(tmp, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '20000' },
      connections: { type: 'string', default: '64' },
      'stream-mb': { type: 'string', default: '100' },
      targets: { type: 'string', default: 'ours,nginx' },
    },
  });
  if (!canCountInstructions()) {
    console.error('valgrind (callgrind) is not installed');
    process.exit(2);
  }
  const rows = await countInstructions(
    fileURLToPath(new URL('..', import.meta.url)),
    values.targets.split(','),
    {
      requests: Number(values.requests),
      connections: Number(values.connections),
      streamMb: Number(values['stream-mb']),
    },
  );
  for (const r of rows)
    console.log(
      `${r.target}\tGET ${Math.round(r.perGet)}\tPOST ${Math.round(r.perPost)}\tstream ${Math.round(r.perStreamMb)}/MiB`,
    );
}
