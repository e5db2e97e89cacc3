// The README's first command, `npm start`, stopped as a supervisor stops it (SIGTERM to npm's own
// process) and as a person does (Ctrl-C: SIGINT to the terminal's whole process group): the server
// drains and exits, nothing is left on its port, and no process of the command remains. Each run
// builds first (a no-op after the build that precedes the tests), hence the generous timeouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, groupMembers, portRefuses, processName, within } from '../support/processes.js';

interface NpmStart {
  npm: ChildProcessWithoutNullStreams;
  port: number;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  cleanup(): void;
}

/** Runs `npm start` as the leader of a process group of its own (as a terminal's job is). */
async function npmStart(env: Record<string, string>): Promise<NpmStart> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-npm-start-'));
  const npm = spawn('npm', ['start'], {
    detached: true,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      API_PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (d: Buffer) => (output += d.toString()));
  npm.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(npm, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const cleanup = () => {
    const left = groupMembers(npm.pid as number);
    if (left.length > 0) process.kill(-(npm.pid as number), 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  const answers = async () => {
    if (npm.exitCode !== null) throw new Error(`npm start ended (${npm.exitCode}): ${output}`);
    return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200;
  };
  try {
    assert.ok(await within(240_000, answers), `npm start did not answer: ${output}`);
  } catch (err) {
    cleanup();
    throw err;
  }
  return { npm, port, output: () => output, exited, cleanup };
}

test('SIGTERM to npm start drains the server, frees the port and leaves no process', async () => {
  // A delay long enough that a busy machine (CI runs two suites at once) still sees the drain.
  const s = await npmStart({ SHUTDOWN_DELAY_MS: '5000' });
  try {
    const group = s.npm.pid as number;
    // npm, then node itself: no shell in between (it would die of the signal and orphan node).
    const names = groupMembers(group).map(processName);
    assert.ok(!names.some((n) => /^(sh|dash|bash)$/.test(n)), names.join(' '));
    process.kill(group, 'SIGTERM');
    // The signal reaches the server through npm, and it drains: not ready, still answering.
    let ready = { status: 0, connection: null as string | null };
    const turned = await within(4000, async () => {
      const res = await fetch(`http://127.0.0.1:${s.port}/readyz`);
      await res.arrayBuffer();
      ready = { status: res.status, connection: res.headers.get('connection') };
      return res.status === 503;
    });
    assert.ok(turned, `/readyz still answers ${ready.status}`);
    assert.equal(ready.connection, 'close');
    const [code, signal] = await s.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, s.output());
    assert.ok(await portRefuses(s.port), 'something still listens on the port');
    assert.ok(
      await within(5000, () => groupMembers(group).length === 0),
      `left: ${groupMembers(group).join(' ')}`,
    );
    assert.match(s.output(), /"signal":"SIGTERM","msg":"shutting down"/);
  } finally {
    s.cleanup();
  }
});

test('Ctrl-C (SIGINT to the process group) stops npm start at once, without an error trace', async () => {
  // The default delay of SIGTERM (5 s) would show in the time taken: a Ctrl-C does not wait.
  const s = await npmStart({});
  try {
    const group = s.npm.pid as number;
    const started = Date.now();
    process.kill(-group, 'SIGINT');
    const [code, signal] = await s.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, s.output());
    assert.ok(Date.now() - started < 4500, `took ${Date.now() - started} ms`);
    assert.ok(await portRefuses(s.port), 'something still listens on the port');
    assert.ok(
      await within(5000, () => groupMembers(group).length === 0),
      `left: ${groupMembers(group).join(' ')}`,
    );
    assert.doesNotMatch(s.output(), /npm error|ERR!|\n\s+at /, s.output());
  } finally {
    s.cleanup();
  }
});
