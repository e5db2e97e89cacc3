// Processes of the scale-out tests: `dx serve --role worker` children, and a file server that
// streams a CSV slowly so a worker can be caught in the middle of a job.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A `dx serve --role worker` child process. */
export interface WorkerProcess {
  pid: number;
  /** Everything it wrote so far: the banner (stderr) and its JSON log lines (stdout). */
  output(): string;
  kill(signal: NodeJS.Signals): void;
  /** Resolves once the process has started its roles (it prints a banner), within `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `node <bin> serve --role worker` with `env` on top of this process's environment. */
export function startWorkerProcess(bin: string, env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [bin, 'serve', '--role', 'worker'], {
    // Several workers run at once: each takes an admin port of its own unless `env` names one.
    env: { ...process.env, ADMIN_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (log += chunk));
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  if (child.pid === undefined) throw new Error('could not start a worker process');
  return {
    pid: child.pid,
    output: () => log,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    exited,
    async ready(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (!log.includes('Dataset Exchange Service: roles')) {
        if (child.exitCode !== null || Date.now() > until) {
          throw new Error(`worker ${child.pid} did not start: ${log}`);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

/** An HTTP server whose every path is a CSV of `rows` records, sent over `durationMs`. */
export interface SlowCsvServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the slow CSV server on a loopback port. */
export async function startSlowCsvServer(rows: number, durationMs: number): Promise<SlowCsvServer> {
  const steps = 20;
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').replace(/\W/g, '');
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.write('id,name\n');
    let step = 0;
    const tick = () => {
      const from = Math.floor((rows * step) / steps);
      const to = Math.floor((rows * (step + 1)) / steps);
      let chunk = '';
      for (let r = from; r < to; r++) chunk += `${r},${name}-${r}\n`;
      step++;
      if (step === steps) res.end(chunk);
      else {
        res.write(chunk);
        timer = setTimeout(tick, durationMs / steps);
      }
    };
    let timer = setTimeout(tick, durationMs / steps);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
