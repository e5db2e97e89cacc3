// `dx upload` across a restart of the service: while it polls the job, the service stops (SIGTERM)
// and comes back on the same port and data; the command says once that it waits, then reports the
// job's real outcome. Past --wait-for-service it gives up with the reason.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { freePort, within } from '../support/processes.js';
import { BANNERS, DX_BIN, serve, type Served } from '../support/served.js';

interface Upload {
  stdout: () => string;
  stderr: () => string;
  exited: Promise<[number | null]>;
}

/** `dx upload` as a user runs it, its output read as it comes. */
function upload(h: Fixture, args: string[]): Upload {
  const child = spawn(process.execPath, [DX_BIN, 'upload', ...args], {
    env: { ...process.env, DX_ACCESS_TOKEN: h.token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exited: once(child, 'close') as Promise<[number | null]>,
  };
}

// A poll on a kept-alive connection that the stopping service closes meets a reset; later ones
// find nothing listening. Either way the command says so once and waits.
const WAITING =
  /^the service does not answer: (nothing listens there \(127\.0\.0\.1:\d+\)|the connection was reset); waiting up to 2m 00s for it$/m;

await onDatabase('sqlite', 'dx upload over a restart of the service', (target) => {
  /** The fixture (API only, in this process) onboards; the services under test share its data. */
  async function setUp() {
    const h = await startFixture(target, { ROLES: 'api' });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { ...h.processEnv, API_PORT: String(port), PUBLIC_URL: url, SHUTDOWN_DELAY_MS: '1000' };
    const start = (role: string): Served => serve(role, { dataDir: h.processEnv.DATA_DIR, env });
    const datasetId = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['id'],
    );
    const file = join(h.processEnv.DATA_DIR, 'people.csv');
    writeFileSync(file, 'id,name\n1,Ann\n2,Bob\n3,Cy\n');
    return { h, url, start, datasetId, file };
  }

  it('rides over a restart while it polls and reports the job’s real outcome', async () => {
    const { h, url, start, datasetId, file } = await setUp();
    const running: Served[] = [];
    try {
      // The API alone first: the job stays queued while the command polls it.
      const first = start('api');
      running.push(first);
      await first.banner(BANNERS.api);
      const dx = upload(h, [datasetId, file, '--url', url]);
      assert.ok(await within(60_000, () => /waiting for a worker \(Queued\)/.test(dx.stderr())), dx.stderr());
      assert.equal(await first.stop(), 0, first.stderr());
      assert.ok(await within(30_000, () => WAITING.test(dx.stderr())), dx.stderr());

      // Back on the same port and data, with a worker this time.
      const second = start('api,worker');
      running.push(second);
      await second.banner(BANNERS.api);
      const [code] = await dx.exited;
      assert.equal(code, 0, dx.stderr());
      assert.match(
        dx.stdout(),
        /^Completed: 3 records loaded \(3 rows read, 0 duplicates collapsed\)\. Job /m,
      );
      assert.equal(dx.stderr().match(new RegExp(WAITING.source, 'gm'))?.length, 1, dx.stderr());
      assert.equal(
        (await h.api<{ recordCount: number }>('GET', `/datasets/${datasetId}`)).json.recordCount,
        3,
      );
    } finally {
      for (const s of running) s.cleanup();
      await h.close();
    }
  });

  it('gives up after --wait-for-service, naming what failed', async () => {
    const { h, url, start, datasetId, file } = await setUp();
    const service = start('api');
    try {
      await service.banner(BANNERS.api);
      const dx = upload(h, [datasetId, file, '--url', url, '--wait-for-service', '2']);
      assert.ok(await within(60_000, () => /waiting for a worker \(Queued\)/.test(dx.stderr())), dx.stderr());
      assert.equal(await service.stop(), 0, service.stderr());
      const stoppedAt = Date.now();
      const [code] = await dx.exited;
      const tookMs = Date.now() - stoppedAt;
      assert.equal(code, 1, dx.stderr());
      assert.match(dx.stderr(), /waiting up to 2s for it\n/);
      assert.match(
        dx.stderr(),
        /^dx: cannot reach the service at http:\/\/127\.0\.0\.1:\d+\/?: nothing listens there/m,
      );
      assert.ok(tookMs < 10_000, `gave up after ${tookMs} ms`);
      // A wait that is not a number of seconds is refused before anything is sent.
      const refused = upload(h, [datasetId, file, '--url', url, '--wait-for-service', 'soon']);
      assert.equal((await refused.exited)[0], 1);
      assert.match(refused.stderr(), /--wait-for-service must be a number of seconds/);
    } finally {
      service.cleanup();
      await h.close();
    }
  });
});
