// `dx changes`: follows a dataset's change feed over the API with the client package, as a
// partner's sync script would: every change since a cursor as one JSON line on stdout, then the
// cursor to keep. With --cursor-file the command is a sync step: it starts from the cursor kept
// there and keeps the new one there once every change was printed (docs/loading.md, "Following
// changes").
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { DxClient, DxProblemError } from '@dataset-exchange/client';
import { serviceUnreachable } from '../errors.js';

interface ChangesOptions {
  since?: string;
  cursorFile?: string;
  pageSize: string;
  token?: string;
  url?: string;
}

/** Registers `changes` on the program. */
export function registerChangesCommand(program: Command): void {
  program
    .command('changes <datasetId>')
    .description(
      "print a dataset's changes since a cursor, one JSON line each ({op: upsert|delete|schemaChanged, …}), then the cursor to keep (stderr)",
    )
    .option('--since <cursor>', 'where to start: the changesCursor of a records read, or a kept cursor')
    .option(
      '--cursor-file <file>',
      'start from the cursor in this file (unless --since) and write the new cursor to it once every change was printed',
    )
    .option('--page-size <n>', 'changes per request (1 to 10000)', '1000')
    .option('--token <token>', 'access token (default: env DX_ACCESS_TOKEN)')
    .option('--url <url>', 'API base URL (default: env DX_API_URL, else http://localhost:8080)')
    .action(async (datasetId: string, opts: ChangesOptions) => {
      // Every flag is checked before anything is sent.
      const token = opts.token ?? process.env.DX_ACCESS_TOKEN ?? '';
      if (token === '') throw new Error('an access token is needed: --token or env DX_ACCESS_TOKEN');
      const pageSize = Number(opts.pageSize);
      if (!/^\d+$/.test(opts.pageSize) || pageSize < 1 || pageSize > 10_000)
        throw new Error(`--page-size must be an integer from 1 to 10000 (got "${opts.pageSize}")`);
      const apiUrl = opts.url ?? process.env.DX_API_URL ?? 'http://localhost:8080';
      if (!/^https?:\/\/[^/]/i.test(apiUrl) || !URL.canParse(apiUrl))
        throw new Error(`--url must be an http(s) URL such as http://localhost:8080 (got "${apiUrl}")`);
      const since = opts.since ?? (opts.cursorFile !== undefined ? keptCursor(opts.cursorFile) : '');
      if (since === '') {
        throw new Error(
          'a cursor is needed: --since, or --cursor-file holding one (the changesCursor of a records read: GET /datasets/<id>/records or records:retrieve)',
        );
      }

      const dx = new DxClient({ baseUrl: apiUrl, accessToken: token, userAgent: 'dx-cli' });
      const feed = dx.changes(datasetId, since, { pageSize });
      let count = 0;
      try {
        for await (const change of feed) {
          process.stdout.write(`${JSON.stringify(change)}\n`);
          count++;
        }
      } catch (err) {
        throw cliError(err, apiUrl);
      }
      if (opts.cursorFile !== undefined) keepCursor(opts.cursorFile, feed.cursor);
      process.stderr.write(
        `${count} ${count === 1 ? 'change' : 'changes'}; cursor to keep: ${feed.cursor}\n`,
      );
    });
}

function keptCursor(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return '';
    throw new Error(`--cursor-file ${file} cannot be read: ${(err as Error).message}`);
  }
}

/** Written beside and renamed into place: a crash never leaves half a cursor. */
function keepCursor(file: string, cursor: string): void {
  const temporary = `${file}.tmp`;
  writeFileSync(temporary, `${cursor}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** One line for what went wrong: the service's problem (an expired cursor says what to do), or an
 * unreachable service. */
function cliError(err: unknown, apiUrl: string): unknown {
  if (err instanceof DxProblemError)
    return new Error(`${err.request}: HTTP ${err.status}: ${err.detail ?? err.title}`, { cause: err });
  return serviceUnreachable(err, apiUrl) ?? err;
}
