// Child processes of the benchmark: servers that announce their URL on a line, and stopping them.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { openSync } from 'node:fs';

/** A started server process and the URL it announced. */
export interface Spawned {
  child: ChildProcess;
  url: string;
  /** Everything the process printed on the watched streams so far (for error messages). */
  output(): string;
}

/** Options of `spawnServer`. */
export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  /** Send stdout to this file instead of watching it (e.g. a busy access log). */
  stdoutFile?: string;
  /** Matches the line that says the server is up; group 1 is its URL. */
  ready?: RegExp;
  /** Give up after this many milliseconds. */
  timeoutMs?: number;
}

const READY = /(?:ready|listening on) (http:\/\/\S+)/;

/** Starts `command args` and resolves once it prints its ready line. */
export function spawnServer(command: string, args: string[], options: SpawnOptions = {}): Promise<Spawned> {
  const stdout = options.stdoutFile === undefined ? 'pipe' : openSync(options.stdoutFile, 'w');
  const stdio: StdioOptions = ['ignore', stdout, 'pipe'];
  const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio });
  let seen = '';
  const ready = options.ready ?? READY;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not start in time: ${seen}`));
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const m = ready.exec(seen);
      if (m === null) return;
      clearTimeout(timer);
      // Keep draining the pipes so a chatty child never blocks on a full one.
      resolve({ child, url: m[1] as string, output: () => seen });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it was ready: ${seen}`));
    });
  });
}

/** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Runs a short command to completion and returns its stdout (rejects on a non-zero exit). */
export function run(
  command: string,
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 600_000,
      env: { ...process.env, ...options.env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}
