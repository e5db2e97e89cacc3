// `dx upload`: an app developer's one-liner to load a file into a dataset over the API, written
// with the project's own client package (@dataset-exchange/client) as partners would write it:
// an upload URL, the PUT of the file (or a resumable session's slices), then the job polled to
// its end. Progress of the whole job (the upload, then the records read) goes to stderr
// (progress.ts); the outcome, and the row errors and rejected-rows link when there are any. The
// polls ride over a restart of the service; the upload itself is not repeated (see below).
import { closeSync, fstatSync, openSync } from 'node:fs';
import type { Command } from 'commander';
import {
  DxClient,
  DxProblemError,
  formatOfName,
  isFinal,
  JobTimeoutError,
  parseApiTimestamp,
  type JobLog,
  type JobResult,
  type LoadMode,
  type UploadFormat,
} from '@dataset-exchange/client';
import { serviceUnreachable, unavailableReason } from '../errors.js';
import { counted, ProgressDisplay } from '../progress.js';
import { LOAD_MODES } from '../../domain/jobs/status.js';
import { MAX_BAD_RECORDS_LIMIT } from '../../domain/jobs/load-options.js';

interface UploadOptions {
  mode: string;
  format?: string;
  token?: string;
  url?: string;
  json?: boolean;
  timeout: string;
  waitForService: string;
  dryRun?: boolean;
  maxBadRecords?: string;
  resumable?: boolean;
}

const FORMATS: readonly UploadFormat[] = ['csv', 'tsv', 'json'];

/** Registers `upload` on the program. */
export function registerUploadCommand(program: Command): void {
  program
    .command('upload <datasetId> <file>')
    .description(
      'load a CSV, TSV or JSON file (gzip too) into a dataset through the API; progress of the upload and the job goes to stderr',
    )
    .option(
      '--mode <mode>',
      'create (dataset must be empty), replace, append (new keys only), upsert (new keys added, held keys replaced) or delete (the file lists primary keys; their records are deleted)',
      'create',
    )
    .option('--dry-run', 'run the whole load and report what it would do, changing nothing')
    .option(
      '--max-bad-records <n>',
      `records with defects the load may leave out and still complete (0 to ${MAX_BAD_RECORDS_LIMIT}; default 0)`,
    )
    .option('--resumable', 'upload in slices through a resumable session (resumes after a failed slice)')
    .option('--format <format>', 'csv, tsv or json (default: from the file name)')
    .option('--token <token>', 'access token (default: env DX_ACCESS_TOKEN)')
    .option('--url <url>', 'API base URL (default: env DX_API_URL, else http://localhost:8080)')
    .option('--timeout <seconds>', 'how long to wait for the job', '3600')
    .option(
      '--wait-for-service <seconds>',
      'while waiting for the job, how long to go on when the service does not answer (a restart)',
      '120',
    )
    .option('--json', 'print the final job as JSON')
    .action(async (datasetId: string, file: string, opts: UploadOptions) => {
      // Every flag is checked before anything is sent.
      const token = opts.token ?? process.env.DX_ACCESS_TOKEN ?? '';
      if (token === '') throw new Error('an access token is needed: --token or env DX_ACCESS_TOKEN');
      if (!(LOAD_MODES as readonly string[]).includes(opts.mode))
        throw new Error(`--mode must be one of ${LOAD_MODES.join(', ')}`);
      const format = opts.format ?? formatOfName(file) ?? 'csv';
      if (!(FORMATS as readonly string[]).includes(format))
        throw new Error(`--format must be csv, tsv or json (got "${format}")`);
      const maxBadRecords =
        opts.maxBadRecords === undefined ? undefined : parseMaxBadRecords(opts.maxBadRecords);
      const timeoutSeconds = Number(opts.timeout);
      if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
        throw new Error(`--timeout must be a positive number of seconds (got "${opts.timeout}")`);
      const outageSeconds = Number(opts.waitForService);
      if (opts.waitForService.trim() === '' || !Number.isFinite(outageSeconds) || outageSeconds < 0)
        throw new Error(
          `--wait-for-service must be a number of seconds, 0 or more (got "${opts.waitForService}")`,
        );
      const apiUrl = opts.url ?? process.env.DX_API_URL ?? 'http://localhost:8080';
      if (!/^https?:\/\/[^/]/i.test(apiUrl) || !URL.canParse(apiUrl))
        throw new Error(`--url must be an http(s) URL such as http://localhost:8080 (got "${apiUrl}")`);
      checkFile(file);
      const dx = new DxClient({ baseUrl: apiUrl, accessToken: token, userAgent: 'dx-cli' });

      const display = new ProgressDisplay(process.stderr);
      let result: JobResult;
      try {
        // Not repeated when it fails: the upload URL's POST would make a second job, and the PUT
        // may have been stored although its answer was lost (the URL then answers 409).
        const upload = await dx.upload(
          datasetId,
          { path: file },
          {
            format: format as UploadFormat,
            mode: opts.mode as LoadMode,
            ...(opts.dryRun === true ? { dryRun: true } : {}),
            ...(maxBadRecords !== undefined ? { maxBadRecords } : {}),
            ...(opts.resumable === true ? { resumable: true } : {}),
            onProgress: ({ bytesSent, bytesTotal }) => {
              const total = bytesTotal ?? bytesSent;
              const state = { phase: 'upload', bytes: bytesSent, total, at: Date.now() } as const;
              display.show(state, bytesSent === total); // the last figures always show
            },
          },
        );
        result = await dx.waitForJob(upload.jobId, {
          timeoutMs: timeoutSeconds * 1000,
          // Quick polls at first (a small file is done in a moment), then about the pace at which
          // the service refreshes a running job's figures (every second).
          initialIntervalMs: 200,
          maxIntervalMs: 1000,
          // Reading the job is safe to repeat: a restart of the service (or a deployment) between
          // two reads does not end the command, and the job's real outcome is reported.
          unavailableMs: outageSeconds * 1000,
          onUnavailable: (err) => {
            const reason = unavailableReason(err);
            display.show({ phase: 'unavailable', reason, waitMs: outageSeconds * 1000, at: Date.now() });
          },
          onPoll: (job) => {
            const status = job.currentStatus.status;
            const ended = isFinal(job);
            const p = job.progress;
            if (p !== null) {
              const state = { rows: p.rowsRead, bytes: p.bytesRead, total: p.bytesTotal };
              display.show({ phase: 'load', ...state, at: parseApiTimestamp(p.updatedAt) }, ended);
            } else if (!ended) {
              display.show({ phase: 'waiting', status, at: Date.now() });
            }
          },
        });
      } catch (err) {
        throw cliError(err, new URL(apiUrl).origin);
      } finally {
        display.end();
      }
      if (opts.json === true) process.stdout.write(`${JSON.stringify(result.job, null, 2)}\n`);
      report(result, opts.json === true);
      process.exitCode = result.status === 'Completed' ? 0 : 1;
    });
}

/** The --max-bad-records value, checked as the service checks it. */
function parseMaxBadRecords(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n > MAX_BAD_RECORDS_LIMIT)
    throw new Error(
      `--max-bad-records must be an integer from 0 to ${MAX_BAD_RECORDS_LIMIT} (got "${value}")`,
    );
  return n;
}

/** One line for what went wrong: the service's problem, an unreachable service, a job still running. */
function cliError(err: unknown, apiUrl: string): unknown {
  if (err instanceof DxProblemError)
    return new Error(`${err.request}: HTTP ${err.status}: ${err.detail ?? err.title}`, { cause: err });
  if (err instanceof JobTimeoutError) return new Error(err.message, { cause: err });
  const unreachable = serviceUnreachable(err, apiUrl);
  if (unreachable !== null) return unreachable;
  // fetch's own refusals carry no system code (a port fetch never calls, such as 1 or 6000).
  if (err instanceof TypeError && err.message === 'fetch failed' && err.cause instanceof Error)
    return new Error(`cannot reach the service at ${apiUrl}: ${err.cause.message}`, { cause: err });
  return err;
}

/** The file to upload, checked before anything is sent: a regular file this user can read. */
function checkFile(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EACCES'
          ? 'this user may not read it'
          : (code ?? String(err));
    throw new Error(`cannot read ${file}: ${why}`, { cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new Error(`${file} is a directory; name the file to upload`);
    if (!stat.isFile()) throw new Error(`${file} is not a regular file; name the file to upload`);
  } finally {
    closeSync(fd);
  }
}

/** What a completed job did: the records loaded, or for a delete, those deleted and the keys that
 * matched none. */
function outcome(mode: LoadMode, log: JobLog, dryRun: boolean): string {
  if (mode === 'delete') {
    const deleted = counted(log.recordsDeleted ?? 0, 'record');
    const missing = `${counted(log.keysNotFound ?? 0, 'key')} matched no record`;
    const holds = `the dataset ${dryRun ? 'would hold' : 'holds'} ${counted(log.rowsLoaded ?? 0, 'record')}`;
    return dryRun
      ? `Dry run completed, nothing changed: ${deleted} would be deleted, ${missing}; ${holds}`
      : `Completed: ${deleted} deleted, ${missing}; ${holds}`;
  }
  const loaded = counted(log.rowsLoaded ?? 0, 'record');
  return dryRun
    ? `Dry run completed, nothing changed: ${loaded} would be loaded`
    : `Completed: ${loaded} loaded`;
}

/** The outcome: a summary on stdout (unless --json), row errors and the rejected-rows link on stderr. */
function report(result: JobResult, json: boolean): void {
  const lines: string[] = [];
  if (result.status === 'Completed') {
    const log = result.log;
    if (!json) {
      const counts =
        `${counted(log.rowsRead ?? 0, 'row')} read, ` +
        `${counted(log.duplicatesCollapsed ?? 0, 'duplicate')} collapsed` +
        (log.rowsRejected ? `, ${counted(log.rowsRejected, 'record')} with defects left out` : '');
      const what = outcome(result.job.mode, log, result.job.dryRun);
      process.stdout.write(`${what} (${counts}). Job ${result.jobId}\n`);
    }
  } else {
    lines.push(`${result.status}: ${result.message} Job ${result.jobId}`);
  }
  for (const e of result.errors) {
    lines.push(`  line ${e.line}${e.property !== undefined ? `, ${e.property}` : ''}: ${e.message}`);
  }
  if (result.errorCount > result.errors.length)
    lines.push(`  … and ${result.errorCount - result.errors.length} more`);
  if (result.rejectedRowsUrl !== null)
    lines.push(`Rejected rows (CSV with their original text, link valid 1 hour): ${result.rejectedRowsUrl}`);
  if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`);
}
