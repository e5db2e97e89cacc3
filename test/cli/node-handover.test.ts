// bin/node-runtime.js's hand-over (an older `node` runs the command again on the bundled Node.js
// 24), taken on purpose here whatever Node.js runs the tests: a launcher calls handOver() with this
// Node.js, as bin/dx.js does with the bundled one. The run must never outlive its starter, kill -9
// included; signals to the starter reach the run, and its exit code and signal come back.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { putFile, requestUpload } from '../support/loading.js';
import { portRefuses, running, within } from '../support/processes.js';

const BIN = join(process.cwd(), 'bin', 'dx.js');
const RUNTIME = pathToFileURL(join(process.cwd(), 'bin', 'node-runtime.js')).href;
// Prints the run's pid, then lets the run write to the same stdout and stderr.
const LAUNCHER = `
import { handOver } from ${JSON.stringify(RUNTIME)};
const run = handOver(process.execPath, [${JSON.stringify(BIN)}, ...process.argv.slice(1)]);
process.stdout.write('run ' + run.pid + '\\n');
`;

interface Launched {
  starter: ChildProcessByStdio<null, Readable, Readable>;
  /** The run's pid, once the launcher printed it. */
  run: Promise<number>;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Starts `dx <args>` through the hand-over. */
function launch(args: string[], env: Record<string, string>): Launched {
  const starter = spawn(process.execPath, ['--input-type=module', '-e', LAUNCHER, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  starter.stdout.on('data', (d: Buffer) => (output += d.toString()));
  starter.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(starter, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const run = (async () => {
    let m: RegExpExecArray | null = null;
    const found = await within(30_000, () => (m = /^run (\d+)$/m.exec(output)) !== null);
    if (!found || m === null) throw new Error(`no run started: ${output}`);
    return Number((m as RegExpExecArray)[1]);
  })();
  return { starter, run, output: () => output, exited };
}

/** Kills what a test left running. */
async function cleanup(l: Launched): Promise<void> {
  const pid = await l.run.catch(() => null);
  if (pid !== null && running(pid)) process.kill(pid, 'SIGKILL');
  if (l.starter.exitCode === null && l.starter.signalCode === null) l.starter.kill('SIGKILL');
}

const CSV = 'id,name\n1,Ann\n2,Bob\n';

await onDatabase('sqlite', 'the Node.js hand-over', (target) => {
  it('a served run stops when its starter is killed with SIGKILL: the port is freed, its worker claims no more jobs', async () => {
    // The fixture (API only, no worker) onboards and reads the jobs; the run is the only worker.
    const h: Fixture = await startFixture(target, { ROLES: 'api' });
    // SHUTDOWN_DELAY_MS stays at its default (5 s): a lost starter does not wait for it.
    const l = launch(['serve', '--role', 'api,worker'], {
      ...h.processEnv,
      HOST: '127.0.0.1',
      API_PORT: '0',
      WORKER_POLL_MS: '100',
      LOG_LEVEL: 'info',
    });
    try {
      const runPid = await l.run;
      assert.ok(
        await within(60_000, () => /API listening on http:\/\/\S+:(\d+)\//.test(l.output())),
        l.output(),
      );
      const port = Number(/API listening on http:\/\/\S+:(\d+)\//.exec(l.output())?.[1]);
      assert.ok(await within(5000, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok));

      // The run's worker takes jobs while its starter lives.
      const before = await h.defineDataset(
        [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'string' },
        ],
        ['id'],
      );
      const first = await requestUpload(h, before);
      assert.equal((await putFile(first.url, CSV)).status, 200);
      assert.equal((await h.waitForJob(first.jobId, 30_000)).currentStatus.datasetJobStatusName, 'Completed');

      const killedAt = Date.now();
      l.starter.kill('SIGKILL');
      assert.ok(
        await within(5000, () => !running(runPid)),
        `the run ${runPid} outlived its starter: ${l.output()}`,
      );
      const tookMs = Date.now() - killedAt;
      assert.ok(await portRefuses(port), 'the run left its port open');
      assert.match(l.output(), /"signal":"SIGHUP","msg":"shutting down"/);

      // No worker is left to take a new job: it stays Queued.
      const after = await h.defineDataset(
        [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'string' },
        ],
        ['id'],
      );
      const second = await requestUpload(h, after);
      assert.equal((await putFile(second.url, CSV)).status, 200);
      await new Promise((r) => setTimeout(r, 2000));
      const job = await h.api<{ currentStatus: { datasetJobStatusName: string } }>(
        'GET',
        `/datasets/jobs/${second.jobId}`,
      );
      assert.equal(job.json.currentStatus.datasetJobStatusName, 'Queued');
      assert.ok(tookMs < 5000, `the run took ${tookMs} ms to stop`);
    } finally {
      await cleanup(l);
      await h.close();
    }
  });
});

it('a short command stops when its starter is killed with SIGKILL', async () => {
  // A service that accepts connections and never answers: `dx upload` waits on it indefinitely.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  // A real file: `dx upload` checks it before it calls the service.
  const dir = mkdtempSync(join(tmpdir(), 'dx-handover-file-'));
  const file = join(dir, 'file.csv');
  writeFileSync(file, 'id\n1\n');
  const l = launch(['upload', 'ds', file, '--url', url], { DX_ACCESS_TOKEN: 't' });
  try {
    const runPid = await l.run;
    assert.ok(await within(30_000, () => sockets.length > 0), `the run never called: ${l.output()}`);
    l.starter.kill('SIGKILL');
    assert.ok(await within(5000, () => !running(runPid)), `the run ${runPid} outlived its starter`);
  } finally {
    await cleanup(l);
    for (const s of sockets) s.destroy();
    silent.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('signals to the starter reach the run, and the run’s exit code and signal come back', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-handover-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // SIGTERM: the run drains and exits 0, so does the starter.
  const served = launch(['serve', '--role', 'worker', '--admin-port', '0'], {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
  });
  try {
    await served.run;
    assert.ok(await within(60_000, () => /Admin listening on/.test(served.output())), served.output());
    served.starter.kill('SIGTERM');
    const [code, signal] = await served.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, served.output());
    assert.match(served.output(), /"signal":"SIGTERM","msg":"shutting down"/);
  } finally {
    await cleanup(served);
  }

  // An exit code: a command refused.
  const refused = launch(['upload', 'ds', 'file.csv'], { DX_ACCESS_TOKEN: '' });
  const [code] = await refused.exited;
  assert.equal(code, 1, refused.output());
  assert.match(refused.output(), /access token/);

  // A signal: the run killed, the starter ends by the same signal.
  const killed = launch(['serve', '--role', 'worker', '--admin-port', '0'], {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
  });
  try {
    const runPid = await killed.run;
    assert.ok(await within(60_000, () => /Admin listening on/.test(killed.output())), killed.output());
    process.kill(runPid, 'SIGKILL');
    const [, signal] = await killed.exited;
    assert.equal(signal, 'SIGKILL');
  } finally {
    await cleanup(killed);
  }
});
