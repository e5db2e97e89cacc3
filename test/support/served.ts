// `dx serve` as a child process, for the suites that test the real command: its banner on stderr,
// its log lines on stdout, and a clean stop. Each process gets its own data directory unless one
// is shared (several roles over one database).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const DX_BIN = join(process.cwd(), 'bin', 'dx.js');

/** The banner lines `dx serve` prints on stderr; the first group is the URL. */
export const BANNERS = {
  admin: /Admin listening on (http:\/\/\S+):/,
  proxy: /Proxy listening on (http:\/\/\S+) /,
  api: /API listening on (http:\/\/\S+)\/api\/v1/,
} as const;

export interface Served {
  child: ChildProcessWithoutNullStreams;
  dataDir: string;
  stdout: () => string;
  stderr: () => string;
  /** Waits until stderr (the banner) matches `pattern`; returns the first group. */
  banner(pattern: RegExp): Promise<string>;
  /** Every stdout line so far, parsed (the JSON log). */
  lines(): Record<string, unknown>[];
  /** Sends SIGTERM and waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** Kills what is left and removes the data directory (unless it was shared). */
  cleanup(): void;
}

export interface ServeOptions {
  env?: Record<string, string>;
  /** A data directory shared with other processes; kept by cleanup(). */
  dataDir?: string;
  args?: string[];
}

/** Starts `dx serve --role <role>` on ephemeral ports, logging at info. */
export function serve(role: string, options: ServeOptions = {}): Served {
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'dx-serve-'));
  const child = spawn(process.execPath, [DX_BIN, 'serve', '--role', role, ...(options.args ?? [])], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      API_PORT: '0',
      PROXY_PORT: '0',
      // A process without the API would take the default admin port, which parallel tests share.
      ...(role.includes('api') ? {} : { ADMIN_PORT: '0' }),
      // No load balancer to wait for on SIGTERM; the tests of the delay set their own.
      SHUTDOWN_DELAY_MS: '0',
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return {
    child,
    dataDir: dir,
    stdout: () => stdout,
    stderr: () => stderr,
    lines: () =>
      stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    banner: (pattern) =>
      new Promise((resolve, reject) => {
        // Generous: under a loaded CI machine a cold start has taken more than 20 s.
        const timer = setTimeout(() => reject(new Error(`no banner ${pattern}: ${stderr}`)), 60_000);
        const check = () => {
          const m = pattern.exec(stderr);
          if (m === null) {
            if (child.exitCode !== null) {
              clearTimeout(timer);
              reject(new Error(`exited ${child.exitCode}: ${stderr}`));
            }
            return;
          }
          clearTimeout(timer);
          child.stderr.off('data', check);
          resolve(m[1] ?? '');
        };
        child.stderr.on('data', check);
        child.once('exit', check);
        check();
      }),
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
    cleanup: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (options.dataDir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
