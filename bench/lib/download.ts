// One large download in a separate process (curl), timed, with the byte count checked.
import { request } from 'undici';
import { run } from './spawn.js';
import { hasCommand } from './tools.js';

/** How one download went. */
export interface Download {
  bytes: number;
  seconds: number;
  mbPerSecond: number;
}

/** Downloads `url` to nowhere and times it; curl when installed, else undici in this process. */
export async function download(url: string, headers: Record<string, string>): Promise<Download> {
  let bytes: number;
  let seconds: number;
  if (hasCommand('curl')) {
    const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const out = await run('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{size_download} %{time_total}',
      ...h,
      url,
    ]);
    const [b, s] = out.trim().split(' ').map(Number);
    bytes = b ?? 0;
    seconds = s ?? NaN;
  } else {
    const started = performance.now();
    const res = await request(url, { headers });
    bytes = 0;
    for await (const chunk of res.body) bytes += (chunk as Buffer).length;
    seconds = (performance.now() - started) / 1000;
  }
  return { bytes, seconds, mbPerSecond: bytes / 2 ** 20 / seconds };
}

/** Downloads `url` in this process, counting bytes and lines (newlines) as they stream by. */
export async function downloadLines(url: string): Promise<{ bytes: number; lines: number }> {
  const res = await request(url);
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${await res.body.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { bytes, lines };
}
