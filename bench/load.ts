// Benchmark of loading end to end (not a test): generates an N x 8 CSV, uploads it through an
// upload URL to a running service (api + worker in this process) and waits for the job; compares
// with `sqlite3 .import` and `psql \copy` into equivalent tables. Prints rows/s and peak RSS.
// Usage: npm run build && node dist/bench/load.js [rows=1000000] [sqlite|postgres ...]
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/domain/identity/apps.js';
import { mintAccessToken } from '../src/domain/identity/access-tokens.js';
import { startService } from '../src/runtime/service.js';

const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PROPERTIES = [
  ['id', 'integer', 'integer primary key', 'bigint primary key'],
  ['name', 'string', 'text', 'text'],
  ['email', 'string', 'text', 'text'],
  ['age', 'integer', 'integer', 'bigint'],
  ['score', 'number', 'real', 'double precision'],
  ['active', 'boolean', 'integer', 'boolean'],
  ['city', 'string', 'text', 'text'],
  ['born', 'date', 'text', 'text'],
] as const;
const CITIES = ['Berlin', 'Lagos', 'Lima', 'Osaka', 'Quebec, QC', 'Tunis'];

async function generate(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  out.write(`${PROPERTIES.map((p) => p[0]).join(',')}\n`);
  let chunk = '';
  for (let i = 1; i <= rows; i++) {
    const born = `19${50 + (i % 50)}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`;
    chunk += `${i},Person ${i},person${i}@example.org,${18 + (i % 80)},${(i % 1000) / 7},${i % 3 === 0},"${CITIES[i % 6]}",${born}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

function seconds(fn: () => void): number {
  const t = performance.now();
  fn();
  return (performance.now() - t) / 1000;
}

function baselineSqlite(dir: string, file: string): number {
  const db = join(dir, 'baseline.sqlite');
  const cols = PROPERTIES.map((p) => `${p[0]} ${p[2]}`).join(', ');
  execFileSync('sqlite3', [db, `create table t (${cols});`]);
  return seconds(() =>
    execFileSync('sqlite3', [
      db,
      '-cmd',
      'pragma journal_mode=wal',
      '-cmd',
      '.mode csv',
      `.import --skip 1 ${file} t`,
    ]),
  );
}

function baselinePostgres(file: string): number {
  const cols = PROPERTIES.map((p) => `${p[0]} ${p[3]}`).join(', ');
  execFileSync('psql', [
    PG_URL,
    '-qc',
    `drop table if exists bench_baseline; create table bench_baseline (${cols})`,
  ]);
  const t = seconds(() =>
    execFileSync('psql', [PG_URL, '-qc', `\\copy bench_baseline from '${file}' csv header`]),
  );
  execFileSync('psql', [PG_URL, '-qc', 'drop table bench_baseline']);
  return t;
}

async function ours(engine: 'sqlite' | 'postgres', dir: string, file: string): Promise<number> {
  const schema = `bench_${Date.now().toString(36)}`;
  const config = loadConfig({
    DATA_DIR: join(dir, engine),
    DATABASE_URL: engine === 'sqlite' ? '' : PG_URL,
    API_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    WORKER_POLL_MS: '20',
  });
  const service = await startService(config, {
    logger: false,
    ...(engine === 'postgres' ? { database: { schema } } : {}),
  });
  config.publicUrl = service.apiUrl ?? '';
  try {
    const app = await createApp(service.database.db, { name: 'bench', alg: 'ES256' });
    const { token } = await mintAccessToken(service.database.db, {
      appId: app.app.id,
      installationId: app.installationId,
      workspaceKey: app.workspaceKey,
      permissions: [],
      ttlSeconds: 3600,
    });
    const api = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
      const res = await request(`${config.publicUrl}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return (await res.body.json()) as T;
    };
    const properties = PROPERTIES.map(([name, type]) => ({ name, type }));
    const ds = await api<{ datasetId: string }>('POST', '/datasets', {
      name: 'bench',
      schema: { properties, primaryKey: ['id'] },
    });
    const started = performance.now();
    const up = await api<{ url: string; jobId: string }>('POST', `/datasets/${ds.datasetId}/uploadUrl`, {
      contentType: 'csv',
    });
    const put = await request(up.url, {
      method: 'PUT',
      headers: { 'content-type': 'text/csv', 'content-length': String(statSync(file).size) },
      body: createReadStream(file),
    });
    await put.body.dump();
    for (;;) {
      const job = await api<{ currentStatus: { datasetJobStatusName: string; logData: unknown } }>(
        'GET',
        `/datasets/jobs/${up.jobId}`,
      );
      const status = job.currentStatus.datasetJobStatusName;
      if (status === 'Completed') break;
      if (status === 'Failed') throw new Error(`load failed: ${JSON.stringify(job.currentStatus)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return (performance.now() - started) / 1000;
  } finally {
    await service.close();
    if (engine === 'postgres') {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    }
  }
}

const rows = Number(process.argv[2] ?? 1_000_000);
const engines = process.argv.slice(3).length > 0 ? process.argv.slice(3) : ['sqlite', 'postgres'];
const dir = await mkdtemp(join(tmpdir(), 'dx-bench-load-'));
try {
  const file = join(dir, 'data.csv');
  await generate(file, rows);
  console.log(`${rows} rows x 8 columns, ${(statSync(file).size / 1e6).toFixed(0)} MB CSV`);
  const line = (what: string, s: number) =>
    console.log(
      `${what.padEnd(24)} ${s.toFixed(2).padStart(7)} s  ${Math.round(rows / s)
        .toLocaleString('en')
        .padStart(10)} rows/s`,
    );
  for (const engine of engines) {
    if (engine === 'sqlite') {
      line('sqlite3 .import', baselineSqlite(dir, file));
      line('dx load (SQLite)', await ours('sqlite', dir, file));
    } else if (engine === 'postgres') {
      line('psql \\copy', baselinePostgres(file));
      line('dx load (PostgreSQL)', await ours('postgres', dir, file));
    }
  }
  console.log(
    `peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (this process: service + bench)`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
