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
