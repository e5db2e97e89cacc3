// nginx as the reverse proxy users would put in front of the upstream instead of ours: a foreground
// child with a generated configuration in a scratch folder, tuned the way a careful operator would.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, waitForPort } from './net.js';
import { childrenOf } from './procfs.js';
import { commandPath, ensureCommand } from './tools.js';

/** A running nginx. */
export interface Nginx {
  child: ChildProcess;
  url: string;
  version: string;
  /** The worker processes (they do the proxying; the master only supervises). */
  workers(): number[];
}

/** The nginx configuration for a reverse proxy of `upstream` on `port`. */
export function nginxConfig(dir: string, port: number, upstream: URL, workers: number): string {
  return `worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  # Our proxy writes one line per request, so nginx logs too, buffered the way operators run it.
  log_format timed '$remote_addr "$request" $status $body_bytes_sent $request_time $upstream_response_time';
  access_log ${dir}/access.log timed buffer=64k flush=1s;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy_temp;
  fastcgi_temp_path ${dir}/fastcgi_temp;
  uwsgi_temp_path ${dir}/uwsgi_temp;
  scgi_temp_path ${dir}/scgi_temp;
  # The defaults (1000) would reconnect every 1000 requests; ours keeps connections as long as asked.
  keepalive_requests 1000000;
  keepalive_timeout 65s;
  upstream dev {
    server ${upstream.host};
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 10m;
    location / {
      proxy_pass http://dev;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** Whether nginx is there (installing Debian's nginx-light or nginx when it is not and we may). */
export function ensureNginx(): boolean {
  return ensureCommand('nginx', ['nginx-light', 'nginx']);
}

/** Starts nginx in the foreground as our child, proxying to `upstreamUrl`. */
export async function startNginx(dir: string, upstreamUrl: string, workers: number): Promise<Nginx> {
  const bin = commandPath('nginx');
  if (bin === null) throw new Error('nginx is not installed');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, new URL(upstreamUrl), workers));
  // `nginx -v` prints to stderr; read it before starting, so the label never races the output.
  const about = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  const version = /nginx\/(\S+)/.exec(`${about.stderr}${about.stdout}`)?.[1] ?? '?';
  const child = spawn(bin, ['-p', dir, '-c', conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  await waitForPort(port);
  const pid = child.pid as number;
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    version,
    workers: () => childrenOf(pid),
  };
}
