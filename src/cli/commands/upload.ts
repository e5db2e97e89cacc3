// `dx upload`: an app developer's one-liner to load a file into a dataset over the API: asks for
// an upload URL, PUTs the file, polls the job, prints the outcome; progress of the whole job (the
// upload, then the records read) goes to stderr (progress.ts).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import type { Command } from 'commander';
import { serviceUnreachable } from '../errors.js';
import { request } from 'undici';
import { parseApiTimestamp, ProgressDisplay } from '../progress.js';
import { LOAD_MODES } from '../../domain/jobs/status.js';

interface UploadOptions {
  mode: string;
  format?: string;
  token?: string;
  url?: string;
  json?: boolean;
  timeout: string;
}

interface JobProgressBody {
  bytesRead: number;
  bytesTotal: number | null;
  rowsRead: number;
  updatedAt: string;
}

interface JobStatusBody {
  datasetJobStatusName: string;
  logData: { message: string; rowsRead?: number; rowsLoaded?: number; duplicatesCollapsed?: number } | null;
  errorData: { errorCount: number; errors: { line: number; property?: string; message: string }[] } | null;
}

const MEDIA_TYPES: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
};

/** Registers `upload` on the program. */
export function registerUploadCommand(program: Command): void {
  program
    .command('upload <datasetId> <file>')
    .description(
      'load a CSV, TSV or JSON file (gzip too) into a dataset through the API; progress of the upload and the job goes to stderr',
    )
    .option(
      '--mode <mode>',
      'create (dataset must be empty), replace, append (new keys only) or upsert (new keys added, held keys replaced)',
      'create',
    )
    .option('--format <format>', 'csv, tsv or json (default: from the file name)')
    .option('--token <token>', 'access token (default: env DX_ACCESS_TOKEN)')
    .option('--url <url>', 'API base URL (default: env DX_API_URL, else http://localhost:8080)')
    .option('--timeout <seconds>', 'how long to wait for the job', '3600')
    .option('--json', 'print the final job as JSON')
    .action(async (datasetId: string, file: string, opts: UploadOptions) => {
      const token = opts.token ?? process.env.DX_ACCESS_TOKEN ?? '';
      if (token === '') throw new Error('an access token is needed: --token or env DX_ACCESS_TOKEN');
      if (!(LOAD_MODES as readonly string[]).includes(opts.mode))
        throw new Error(`--mode must be one of ${LOAD_MODES.join(', ')}`);
      const format = opts.format ?? formatFromName(file);
      const mediaType = MEDIA_TYPES[format];
      if (mediaType === undefined) throw new Error(`--format must be csv, tsv or json (got "${format}")`);
      const base = apiBase(opts.url ?? process.env.DX_API_URL ?? 'http://localhost:8080');
      const size = (await stat(file)).size;

      const started = await call<{ url: string; jobId: string }>(
        'POST',
        `${base}/datasets/${encodeURIComponent(datasetId)}/uploadUrl?mode=${opts.mode}`,
        token,
        { contentType: format },
      );
      const display = new ProgressDisplay(process.stderr);
      const put = await request(started.url, {
        method: 'PUT',
        headers: { 'content-type': mediaType, 'content-length': String(size) },
        body: createReadStream(file).pipe(new UploadCounter(size, display)),
      });
      const putText = await put.body.text();
      if (put.statusCode !== 200) {
        display.end();
        throw new Error(`upload refused (HTTP ${put.statusCode}): ${detailOf(putText)}`);
      }

      const until = Date.now() + Number(opts.timeout) * 1000;
      let status: JobStatusBody;
      // Quick polls at first (a small file is done in a moment), then about the pace at which the
      // service refreshes a running job's figures (every second).
      for (let delay = 200; ; delay = Math.min(1000, delay * 1.5)) {
        const job = await call<{ currentStatus: JobStatusBody; progress?: JobProgressBody | null }>(
          'GET',
          `${base}/datasets/jobs/${started.jobId}`,
          token,
        );
        status = job.currentStatus;
        const ended = ['Completed', 'Failed', 'Expired'].includes(status.datasetJobStatusName);
        const p = job.progress ?? null;
        if (p !== null) {
          const state = { rows: p.rowsRead, bytes: p.bytesRead, total: p.bytesTotal };
          display.show({ phase: 'load', ...state, at: parseApiTimestamp(p.updatedAt) }, ended);
        } else if (!ended) {
          display.show({ phase: 'waiting', status: status.datasetJobStatusName, at: Date.now() });
        }
        if (ended) {
          display.end();
          if (opts.json === true) process.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
          break;
        }
        if (Date.now() > until) {
          display.end();
          throw new Error(`job ${started.jobId} is still ${status.datasetJobStatusName}`);
        }
        await new Promise((r) => setTimeout(r, delay));
      }
      report(started.jobId, status, opts.json === true);
      process.exitCode = status.datasetJobStatusName === 'Completed' ? 0 : 1;
    });
}

function report(jobId: string, s: JobStatusBody, json: boolean): void {
  const log = s.logData;
  if (s.datasetJobStatusName === 'Completed') {
    if (!json) {
      process.stdout.write(
        `Completed: ${log?.rowsLoaded ?? 0} records loaded (${log?.rowsRead ?? 0} rows read, ` +
          `${log?.duplicatesCollapsed ?? 0} duplicates collapsed). Job ${jobId}\n`,
      );
    }
    return;
  }
  const lines = [`${s.datasetJobStatusName}: ${log?.message ?? ''} Job ${jobId}`];
  for (const e of s.errorData?.errors ?? []) {
    lines.push(`  line ${e.line}${e.property !== undefined ? `, ${e.property}` : ''}: ${e.message}`);
  }
  const shown = s.errorData?.errors.length ?? 0;
  if ((s.errorData?.errorCount ?? 0) > shown)
    lines.push(`  … and ${(s.errorData?.errorCount ?? 0) - shown} more`);
  process.stderr.write(`${lines.join('\n')}\n`);
}

function formatFromName(file: string): string {
  const ext = extname(file.replace(/\.gz$/i, '')).toLowerCase().slice(1);
  return ext === 'ndjson' || ext === 'jsonl' ? 'json' : ext || 'csv';
}

/** Accepts `http://host:8080` or `http://host:8080/api/v1`. */
function apiBase(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
}

async function call<T>(method: string, url: string, token: string, body?: unknown): Promise<T> {
  const res = await request(url, {
    method: method as 'GET' | 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  }).catch((err: unknown) => {
    throw serviceUnreachable(err, new URL(url).origin) ?? err;
  });
  const text = await res.body.text();
  if (res.statusCode >= 300)
    throw new Error(`${method} ${new URL(url).pathname}: HTTP ${res.statusCode}: ${detailOf(text)}`);
  return JSON.parse(text) as T;
}

function detailOf(text: string): string {
  try {
    const p = JSON.parse(text) as { detail?: string };
    return p.detail ?? text;
  } catch {
    return text.slice(0, 200);
  }
}

/** Passes the file's bytes through to the PUT, showing how many went. */
class UploadCounter extends Transform {
  private sent = 0;
  constructor(
    private readonly total: number,
    private readonly display: ProgressDisplay,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.sent += chunk.length;
    const state = { phase: 'upload', bytes: this.sent, total: this.total, at: Date.now() } as const;
    this.display.show(state, this.sent === this.total); // the last figures always show
    done(null, chunk);
  }
}
