// API part: GET /api/v1/datasets (five datasets defined) and token minting (POST
// /api/v1/auth/clientToken) on SQLite, served by `dx serve --role api` in its own process, beside
// GET /healthz as the floor of the framework stack (routing, hooks, logging, serialisation).
import { join } from 'node:path';
import { openDatabase } from '../src/storage/db/database.js';
import { migrateToLatest } from '../src/storage/db/migrate.js';
import { createApp } from '../src/domain/identity/apps.js';
import { getWorkspace } from '../src/domain/identity/workspaces.js';
import { mintAccessToken } from '../src/domain/identity/access-tokens.js';
import { signAppJwt } from '../src/domain/identity/app-jwt-signer.js';
import { createDataset } from '../src/domain/datasets/datasets.js';
import { runLoad, type LoadSpec } from './lib/load.js';
import type { BenchContext, BenchPart } from './lib/part.js';
import { totalCpuMs } from './lib/procfs.js';
import { table } from './lib/report.js';
import { spawnServer, stop } from './lib/spawn.js';
import { cell, median, ratio } from './lib/stats.js';

const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 64);
const DATASETS = 5;

/** The API part of the suite. */
export const apiPart: BenchPart = {
  usesLoadTool: true,
  describe: 'API on SQLite: GET /api/v1/datasets and POST /api/v1/auth/clientToken vs GET /healthz',
  run: runApiBench,
};

interface Endpoint {
  label: string;
  spec: Omit<LoadSpec, 'connections' | 'seconds'>;
}

/** Onboards one app with datasets in a fresh SQLite file; returns the credentials the load uses. */
async function seed(databaseUrl: string) {
  const database = await openDatabase(databaseUrl);
  try {
    await migrateToLatest(database);
    const created = await createApp(database.db, { name: 'Bench App', alg: 'ES256' });
    const workspace = await getWorkspace(database.db, created.workspaceId);
    const caller = { appId: created.app.id, workspaceId: workspace.id, ownerUserId: workspace.owner_user_id };
    for (let i = 1; i <= DATASETS; i++) {
      await createDataset(database.db, caller, {
        name: `Contacts ${i}`,
        description: 'Benchmark dataset',
        schema: {
          properties: [
            { name: 'voter_id', type: 'integer', required: true },
            { name: 'first_name', type: 'string' },
            { name: 'opted_in', type: 'boolean' },
          ],
          primaryKey: ['voter_id'],
        },
      });
    }
    const access = await mintAccessToken(database.db, {
      appKeyKid: null,
      appId: created.app.id,
      installationId: created.installationId,
      workspaceKey: created.workspaceKey,
      permissions: [],
      ttlSeconds: 86_400,
    });
    // One JWT for the whole run: the service accepts lifetimes up to an hour.
    const jwt = await signAppJwt({
      appId: created.app.id,
      privateKeyPem: created.privateKeyPem,
      kid: created.kid,
    });
    const mint = {
      tokenType: 'appInstallation',
      installationId: created.installationId,
      workspaceKey: created.workspaceKey,
    };
    return { accessToken: access.token, jwt, mintBody: JSON.stringify(mint) };
  } finally {
    await database.close();
  }
}

async function runApiBench(ctx: BenchContext) {
  const databaseUrl = `sqlite:${join(ctx.tmp, 'api.sqlite')}`;
  const creds = await seed(databaseUrl);
  const api = await spawnServer(
    process.execPath,
    [join(ctx.dist, '..', 'bin/dx.js'), 'serve', '--role', 'api'],
    {
      ready: /API listening on (http:\/\/\S+)\/api\/v1/,
      stdoutFile: join(ctx.tmp, 'api.log'),
      env: {
        HOST: '127.0.0.1',
        API_PORT: '0',
        DATABASE_URL: databaseUrl,
        DATA_DIR: ctx.tmp,
        LOG_LEVEL: 'info',
      },
    },
  );
  const pid = api.child.pid as number;
  const endpoints: Endpoint[] = [
    { label: 'GET /healthz (floor)', spec: { url: `${api.url}/healthz` } },
    {
      label: `GET /api/v1/datasets (${DATASETS} datasets)`,
      spec: { url: `${api.url}/api/v1/datasets`, headers: { authorization: `Bearer ${creds.accessToken}` } },
    },
    {
      label: 'POST /api/v1/auth/clientToken',
      spec: {
        url: `${api.url}/api/v1/auth/clientToken`,
        method: 'POST',
        body: creds.mintBody,
        headers: { authorization: `Bearer ${creds.jwt}`, 'content-type': 'application/json' },
      },
    },
  ];
  const samples = endpoints.map(
    () => [] as { rps: number; p50: number; p99: number; cpu: number; bad: number }[],
  );
  try {
    for (let run = 0; run < ctx.runs; run++) {
      for (const [i, e] of endpoints.entries()) {
        const spec = { ...e.spec, connections: CONNECTIONS, seconds: ctx.seconds };
        if (run === 0) await runLoad(ctx.tool, { ...spec, seconds: 1 });
        const cpu0 = totalCpuMs([pid]);
        const r = await runLoad(ctx.tool, spec);
        const cpu = ((totalCpuMs([pid]) - cpu0) / r.requests) * 1000;
        samples[i]?.push({ rps: r.rps, p50: r.p50Ms, p99: r.p99Ms, cpu, bad: r.non2xx + r.errors });
        ctx.log(`  run ${run + 1} ${e.label}: ${Math.round(r.rps)} req/s p99 ${r.p99Ms.toFixed(2)} ms`);
      }
    }
  } finally {
    await stop(api.child);
  }
  const m = samples.map((s) => ({
    rps: median(s.map((x) => x.rps)),
    p50: median(s.map((x) => x.p50)),
    p99: median(s.map((x) => x.p99)),
    cpu: median(s.map((x) => x.cpu)),
    bad: s.reduce((n, x) => n + x.bad, 0),
  }));
  const floor = m[0]?.rps ?? NaN;
  const rows = endpoints.map((e, i) => {
    const x = m[i] as (typeof m)[number];
    return [
      e.label,
      cell(x.rps),
      ratio(x.rps, floor),
      cell(x.p50, 2),
      cell(x.p99, 2),
      cell(x.cpu),
      String(x.bad),
    ];
  });
  return [
    {
      title: `API on SQLite, ${CONNECTIONS} connections`,
      blocks: [
        '`dx serve --role api` in its own process with the access log on (LOG_LEVEL=info, to a file). ' +
          'Token minting verifies an ES256 app JWT, checks the workspace key and writes a token row; ' +
          'the dataset list authenticates the token with one query and reads the five datasets with their tags. ' +
          'SQLite calls are synchronous, so while one runs every other connection waits: hence the long p99.',
        table(
          ['endpoint', 'req/s', '÷ /healthz', 'p50 ms', 'p99 ms', 'CPU ms / 1k req', 'non-2xx + errors'],
          rows,
        ),
      ],
    },
  ];
}
