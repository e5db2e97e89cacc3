// Crash trials, on both engines: `dx serve` (api and worker roles, in a child process) is killed
// with SIGKILL while an upload PUT streams into it, and while it streams an export download. After
// each restart the same upload URL takes a PUT at once (no 409 for a claim the dead process held),
// and once the sweep ran no partial file, retired record table or stale staging table remains; a
// restarted process removes the dead one's partial files before it serves, worker or not.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { sweep } from '../../src/worker/sweep.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { requestUpload } from '../support/loading.js';
import { eventually } from '../support/poll.js';
import { BIN } from '../support/scale-out.js';

const TRIALS = 3;
const ROWS = 20_000;
const csv = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `${from + i},name number ${from + i}\n`).join('');

let nextPort = 19560;

await forEachDatabase('crash-restart trials', (target) => {
  let h: Fixture;
  let child: ChildProcess | null = null;
  let port = 0;
  before(async () => {
    // The in-process fixture (api only) onboards and asks for URLs; the child serves and works.
    h = await startFixture(target, { ROLES: 'api' });
    port = nextPort++;
  });
  after(async () => {
    await kill();
    await h.close();
  });

  const start = async (roles = 'api,worker') => {
    const proc = spawn(process.execPath, [BIN, 'serve'], {
      env: {
        ...process.env,
        ...h.processEnv,
        ROLES: roles,
        HOST: '127.0.0.1',
        API_PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
        WORKER_POLL_MS: '50',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child = proc;
    const up = await eventually(async () => {
      if (proc.exitCode !== null) throw new Error(`dx serve exited: ${output}`);
      return fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status < 500,
        () => false,
      );
    }, 60_000);
    assert.ok(up, `dx serve did not start: ${output}`);
  };
  const kill = async () => {
    const proc = child;
    child = null;
    if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  /** The same path and signed query, on the child's port. */
  const onChild = (url: string) => {
    const u = new URL(url);
    return `http://127.0.0.1:${port}${u.pathname}${u.search}`;
  };
  const tmpFiles = () => {
    try {
      return readdirSync(join(h.processEnv.DATA_DIR, 'objects', '.tmp'));
    } catch {
      return [];
    }
  };

  void it(
    'kill -9 during an upload PUT: the URL takes a PUT again at once, nothing partial remains',
    {
      timeout: 300_000,
    },
    async () => {
      const props = [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ];
      for (let trial = 0; trial < TRIALS; trial++) {
        await start();
        const id = await h.defineDataset(props, ['id']);
        const upload = await requestUpload(h, id);
        const url = onChild(upload.url);
        // A PUT that sends a part of its body and then waits: the service is killed meanwhile.
        const put = request(url, {
          method: 'PUT',
          headers: { 'content-type': 'text/csv', 'content-length': '50000000' },
        });
        put.on('error', () => undefined);
        put.write(`id,name\n${csv(1, ROWS)}`);
        assert.ok(
          await eventually(async () => tmpFiles().length > 0, 30_000),
          'the PUT started writing its file',
        );
        await kill();
        put.destroy();
        assert.ok(tmpFiles().length > 0, 'the killed PUT left a partial file');

        await start();
        const body = `id,name\n${csv(1, 100)}`;
        const again = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body });
        assert.equal(again.status, 200, `trial ${trial}: ${again.status} ${await again.text()}`);
        const job = await h.waitForJob(upload.jobId, 60_000);
        assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
        assert.equal(job.currentStatus.logData?.rowsLoaded, 100);
        // The restarted worker's sweep removes the dead PUT's file without waiting for it to age.
        assert.ok(
          await eventually(async () => tmpFiles().length === 0, 30_000),
          `left: ${tmpFiles().join(', ')}`,
        );
        await kill();
      }
    },
  );

  void it(
    'kill -9 during an upload PUT: an API-only restart removes the partial file before it serves',
    { timeout: 120_000 },
    async () => {
      // No worker anywhere: only the restart itself can sweep the dead PUT's file.
      await start('api');
      const id = await h.defineDataset([{ name: 'id', type: 'integer' }], []);
      const upload = await requestUpload(h, id);
      const put = request(onChild(upload.url), {
        method: 'PUT',
        headers: { 'content-type': 'text/csv', 'content-length': '50000000' },
      });
      put.on('error', () => undefined);
      put.write(`id\n${Array.from({ length: ROWS }, (_, i) => `${i}\n`).join('')}`);
      assert.ok(
        await eventually(async () => tmpFiles().length > 0, 30_000),
        'the PUT started writing its file',
      );
      await kill();
      put.destroy();
      const left = tmpFiles();
      assert.equal(left.length, 1, 'the killed PUT left a partial file');
      await start('api');
      // start() returns once /healthz answers: nothing is awaited after that.
      assert.deepEqual(tmpFiles(), [], `left after the restart: ${left.join(', ')}`);
      await kill();
    },
  );

  void it(
    'kill -9 during export downloads: after the sweep no retired table or file remains',
    {
      timeout: 300_000,
    },
    async () => {
      const props = [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ];
      await start();
      const id = await h.defineDataset(props, ['id']);
      for (let trial = 0; trial < TRIALS; trial++) {
        // Each trial replaces the records (retiring the previous table), then dies mid-download.
        const upload = await requestUpload(h, id, { mode: trial === 0 ? 'create' : 'replace' });
        const put = await fetch(onChild(upload.url), {
          method: 'PUT',
          headers: { 'content-type': 'text/csv' },
          body: `id,name\n${csv(trial * ROWS, ROWS)}`,
        });
        assert.equal(put.status, 200, await put.text());
        assert.equal((await h.waitForJob(upload.jobId, 60_000)).currentStatus.status, 'Completed');
        const link = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
          contentType: 'csv',
        });
        assert.equal(link.status, 200, link.text);
        const res = await fetch(onChild(link.json.url));
        assert.equal(res.status, 200);
        const reader = res.body!.getReader();
        await reader.read(); // the download is under way; the reader reads no more
        await kill();
        await reader.cancel().catch(() => undefined);
        await start();
      }
      await kill();
      // Once the grace periods have passed, the sweep leaves the current table alone and nothing else.
      const later = Date.now() + 3 * 24 * 3600 * 1000;
      const { services, database } = h;
      await sweep({ db: database.db, objects: services.objects, records: services.records }, later);
      const current = await database.db
        .selectFrom('datasets')
        .select('records_table')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(await services.records.listTables(id), [current.records_table]);
      const retired = await database.db.selectFrom('dataset_retired_tables').selectAll().execute();
      assert.deepEqual(retired, []);
      assert.deepEqual(tmpFiles(), []);
    },
  );
});
