// The console's pages of a workspace's datasets and their loads (jobs): the list with which apps
// can see each dataset, one dataset (who sees it, schema, recent loads, first records), deleting
// it with a confirmation, and one load (timeline, counts, row errors).
import { html, type SafeHtml } from './html.js';
import { namePager, nameSearch, type NameListPage } from './name-lists.js';
import { when } from './times.js';
import {
  confirmNameField,
  checkboxes,
  csrfField,
  dataTable,
  errorBox,
  layout,
  type Crumb,
  type PageContext,
  workspaceTrail,
} from './pages.js';
import type { Dataset, DatasetTag } from '../../../domain/datasets/view.js';
import type { TagApp } from '../../../domain/datasets/tags.js';
import type { Job, JobStatusEntry } from '../../../domain/jobs/view.js';
import {
  CONTENT_TYPES,
  JOB_STATUSES,
  LOAD_MODES,
  type ContentType,
  type JobStatus,
  type LoadMode,
} from '../../../domain/jobs/status.js';
import { LOAD_MODE_POLICY } from '../../../domain/jobs/load-modes.js';
import type { ErrorsPage, JobErrorWithText } from '../../../domain/jobs/row-errors.js';
import type { JobsPage } from '../../../domain/jobs/jobs.js';
import type { RecordsPage } from '../../../domain/records/pages.js';
import type { ReadValue } from '../../../storage/records/record-store.js';

/** Records shown on a dataset's page (one page of the records API). */
export const FIRST_RECORDS = 50;
/** Loads shown on a dataset's page. */
export const RECENT_JOBS = 10;
/** Row errors per page of a load's page. */
export const ERRORS_PER_PAGE = 100;
/** A longer value is cut to this many characters in the records table. */
const CELL_CHARS = 120;

/** A status in the words of someone who loads files, not of the job queue. */
const STATUS_WORDS: Record<JobStatus, string> = {
  Created: 'Waiting for the file',
  Queued: 'Waiting to be loaded',
  Running: 'Loading',
  Completed: 'Completed',
  Failed: 'Failed',
  Expired: 'Expired (no file arrived in time)',
};
const ENDED: Record<JobStatus, boolean> = {
  Created: false,
  Queued: false,
  Running: false,
  Completed: true,
  Failed: true,
  Expired: true,
};

/** How often a load's page reloads itself while the load has not ended (the `Refresh` header). */
export const RUNNING_LOAD_REFRESH_SECONDS = 5;

/** Whether a load in this state may still change, so its page reloads itself. */
export function loadStillRuns(status: JobStatus): boolean {
  return !ENDED[status];
}

/** A file size as people read it: `12.7 MB`, decimal units as file managers show them. */
export function fileSize(bytes: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes.toLocaleString('en-US')} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The records a load left in the dataset, as its list and page show them. */
function recordsLoaded(status: JobStatus, loaded: number | undefined): string {
  if (status === 'Failed') return 'none: the load failed, the dataset is as it was';
  if (!ENDED[status]) return 'not yet: the load has not ended';
  return count(loaded) || '0';
}

/** What is known of reading the file while the load runs: the rows, and the share of the bytes. */
function readingProgress(job: Job): string {
  const progress = job.progress;
  if (progress === null) return 'not started';
  const rows = `${count(progress.rowsRead) || '0'} rows`;
  if (progress.bytesTotal === null || progress.bytesTotal === 0)
    return `${rows}, ${fileSize(progress.bytesRead)} read`;
  const share = Math.min(100, Math.floor((100 * progress.bytesRead) / progress.bytesTotal));
  return `${rows}, ${share} % of ${fileSize(progress.bytesTotal)} read`;
}

/** Who made a dataset or asked for a load: the app, for the workspace; the workspace alone when
 * no app is recorded (loads made before loads recorded their installation). */
function madeByWords(app: string | null, workspaceOwner: string): SafeHtml {
  return app !== null
    ? html`the app <strong>${app}</strong>, for ${workspaceOwner}`
    : html`${workspaceOwner}`;
}

/** A load from the console: the member who loaded the file. */
const uploadedByWords = (member: string): SafeHtml => html`${member}, from the console`;

/** What each load mode does to the dataset's records (docs/loading.md, "Load modes"). */
const MODE_WORDS: Record<LoadMode, string> = {
  create: 'first load: the file becomes the records',
  replace: 'replace: the file becomes all the records',
  append: 'append: the file’s records are added',
  upsert: 'update or add: records with a known key are replaced, others added',
  delete: 'delete by key: the records whose key the file lists are deleted',
};

/** A stored timestamp as people read it: `2026-11-24 06:45:46 UTC`. */
/** A record's value in a table cell: empty for null, long text cut with its length said. */
export function cellValue(value: ReadValue): SafeHtml | string {
  return value === null ? '' : cutText(String(value), 'read it whole through the API or an export');
}

/** Text cut to CELL_CHARS characters, its length and `whole` (where to read all of it) said. */
function cutText(text: string, whole: string): SafeHtml | string {
  const chars = Array.from(text); // code points: a cut never splits a character in two
  if (chars.length <= CELL_CHARS) return text;
  return html`${chars.slice(0, CELL_CHARS).join('')}…
    <span class="hint">(${chars.length} characters; ${whole})</span>`;
}

/** A row error's record as the file had it: the text once per record (its later defects say so). */
function rowText(e: JobErrorWithText): SafeHtml | string {
  if (e.originalText === null) return html`<span class="hint">the same row</span>`;
  return html`<code class="wrap">${cutText(e.originalText, 'the rejected rows file has it whole')}</code>`;
}

const base = (workspaceId: number) => `/console/workspaces/${workspaceId}`;
const datasetHref = (workspaceId: number, datasetId: string) => `${base(workspaceId)}/datasets/${datasetId}`;
/** The trail of a dataset's pages: its workspace, then the workspace's datasets. */
const datasetsTrail = (ws: { workspaceId: number; workspaceName: string }): Crumb[] => [
  ...workspaceTrail({ workspaceId: ws.workspaceId, name: ws.workspaceName }),
  { label: 'Datasets', href: `${base(ws.workspaceId)}/datasets` },
];
const jobHref = (workspaceId: number, jobId: string) => `${base(workspaceId)}/jobs/${jobId}`;

/** Which of a dataset's tagged apps can read it now (connected), and which only once reconnected. */
export function visibility(tags: DatasetTag[], connected: TagApp[]) {
  const ids = new Set(connected.map((a) => a.platformAppId));
  return {
    canSee: tags.filter((t) => ids.has(t.platformAppId)),
    notConnected: tags.filter((t) => !ids.has(t.platformAppId)),
  };
}

function appNames(tags: DatasetTag[]): string {
  return tags.map((t) => t.name).join(', ');
}

const HOW_APPS_SEE = html`<p class="hint">
  An app can read, load or delete a dataset only when both are true: the app is connected to this workspace,
  and the dataset is shared with it. A new dataset is shared with the app that made it and, unless that app
  chose otherwise, with every app connected at the time.
</p>`;

/** Datasets per page of a workspace's list. */
export const DATASETS_PER_PAGE = 50;

/** The workspace's datasets, a page at a time in name order, found by name: records, last update,
 * and which apps can see each. */
export function datasetsPage(
  ctx: PageContext,
  opts: {
    workspaceId: number;
    workspaceName: string;
    /** A page of the datasets, in name order, and where it is in the list. */
    datasets: Dataset[];
    list: NameListPage;
    connected: TagApp[];
    notice: string | null;
  },
): string {
  const rows = opts.datasets.map((d) => {
    const { canSee, notConnected } = visibility(d.datasetTags, opts.connected);
    return [
      html`<a href="${datasetHref(opts.workspaceId, d.datasetId)}">${d.name}</a>`,
      d.recordCount.toLocaleString('en-US'),
      d.dateLastRecordUpdated !== null ? when(d.dateLastRecordUpdated) : 'never loaded',
      html`${canSee.length > 0 ? appNames(canSee) : 'no app'}
      ${
        notConnected.length > 0
          ? html`<span class="hint">(also shared with ${appNames(notConnected)}, not connected now)</span>`
          : ''
      }`,
    ];
  });
  return layout(
    ctx,
    `Datasets of ${opts.workspaceName}`,
    html`<h1>Datasets of ${opts.workspaceName}</h1>
      ${opts.notice !== null ? html`<p class="notice" role="status">${opts.notice}</p>` : ''} ${HOW_APPS_SEE}
      ${nameSearch(opts.list, 'datasets')}
      ${
        opts.datasets.length > 0
          ? dataTable(['Dataset', 'Records', 'Last update', 'Apps that can see it'], rows)
          : opts.list.search === '' && !opts.list.later
            ? html`<p>This workspace has no datasets yet. Apps create them through the API.</p>`
            : ''
      }
      ${namePager(opts.list, 'datasets')}`,
    workspaceTrail({ workspaceId: opts.workspaceId, name: opts.workspaceName }),
  );
}

/** One dataset: who can see it (and the form to change that), schema, loads, first records. */
export function datasetPage(
  ctx: PageContext,
  opts: {
    workspaceId: number;
    workspaceName: string;
    dataset: Dataset;
    /** The app that created the dataset (null: none recorded). */
    madeBy: string | null;
    connected: TagApp[];
    canChange: boolean;
    /** UPLOAD_MAX_BYTES: the largest file the load form takes. */
    uploadMaxBytes: number;
    /** A page of its loads, newest first, and whether it is a later one than the first. */
    jobs: { page: JobsPage; later: boolean };
    /** A page of its records, in key order, and whether it is a later one than the first. */
    records: { page: RecordsPage; later: boolean };
    notice: string | null;
  },
): string {
  const d = opts.dataset;
  const href = datasetHref(opts.workspaceId, d.datasetId);
  return layout(
    ctx,
    d.name,
    html`<h1>${d.name}</h1>
      ${opts.notice !== null ? html`<p class="notice" role="status">${opts.notice}</p>` : ''}
      <dl>
        <dt>Dataset ID</dt>
        <dd><code data-copy="the Dataset ID">${d.datasetId}</code></dd>
        ${
          d.description !== ''
            ? html`<dt>Description</dt>
                <dd>${d.description}</dd>`
            : ''
        }
        <dt>Records</dt>
        <dd id="record-count">${d.recordCount.toLocaleString('en-US')}</dd>
        <dt>Last update</dt>
        <dd>${d.dateLastRecordUpdated !== null ? when(d.dateLastRecordUpdated) : 'never loaded'}</dd>
        <dt>Created</dt>
        <dd>${when(d.dateCreated)} by ${madeByWords(opts.madeBy, d.createdBy.displayName)}</dd>
      </dl>
      ${appsSection(ctx, href, d, opts.connected, opts.canChange)}
      <h2>Schema</h2>
      ${dataTable(
        ['Property', 'Type', 'Required', 'Part of the key'],
        d.datasetSchema.properties.map((p) => [
          html`<code>${p.name}</code>`,
          p.type,
          p.required ? 'yes' : 'no',
          d.datasetSchema.primaryKey.includes(p.name) ? 'yes' : 'no',
        ]),
      )}
      <p class="hint">
        ${
          d.datasetSchema.primaryKey.length > 0
            ? html`Records are identified by ${d.datasetSchema.primaryKey.join(' + ')}.`
            : 'Records have no key: each row of a file is a record of its own.'
        }
        <span id="schema-version">Schema version ${d.schemaVersion}</span>: apps change it through the API
        (<code>PATCH /datasets/:id</code>).
      </p>
      ${opts.canChange ? uploadSection(ctx, href, d, opts.uploadMaxBytes) : ''}
      <h2 id="loads">${opts.jobs.later ? 'Older loads' : 'Recent loads'}</h2>
      ${jobsTable(opts.workspaceId, opts.jobs.page.data)}
      ${pager(href, 'loads', opts.jobs.later, opts.jobs.page.metadata.nextPageToken, {
        first: 'Newest loads',
        next: 'Older loads',
      })}
      <h2 id="records">Records</h2>
      ${
        d.recordCount > 0
          ? html`<p>
              <a href="${href}/records.csv" download>Download every record (CSV)</a>:
              <span class="hint"
                >the dataset as it is now, with a header line, as records:retrieve gives it.</span
              >
            </p>`
          : ''
      }
      ${recordsTable(opts.records.page, d.recordCount, opts.records.later)}
      ${pager(href, 'records', opts.records.later, opts.records.page.nextPageToken, {
        first: 'First records',
        next: 'Next records',
      })}
      ${
        opts.canChange
          ? html`<h2>Delete this dataset</h2>
              <p>
                <a href="${href}/delete">Delete ${d.name}…</a>
                <span class="hint">(you are asked to confirm)</span>
              </p>`
          : ''
      }`,
    datasetsTrail(opts),
  );
}

/** The formats a file may be read as, in the words of the form (the API's contentType). */
const FORMAT_WORDS: Record<ContentType, string> = {
  csv: 'CSV (a header line, then one record a line)',
  json: 'JSON (an array of objects, or one object a line)',
  tsv: 'TSV (tab-separated, a header line)',
};

/** The modes a file may be loaded with into this dataset now (the API refuses the others). */
export function modesFor(d: Pick<Dataset, 'recordCount' | 'datasetSchema'>): LoadMode[] {
  return LOAD_MODES.filter((mode) => {
    const requires = LOAD_MODE_POLICY[mode].requires.kind;
    if (requires === 'empty') return d.recordCount === 0;
    if (requires === 'primaryKey') return d.datasetSchema.primaryKey.length > 0;
    return true;
  });
}

/**
 * The form that loads a file: a plain multipart post (the page works without a script), which
 * the console's script sends itself when it runs, to show how much of the file has gone. The
 * CSRF token is the first field and the file the last: the route reads the fields as they come
 * and checks the token before it stores a byte.
 */
function uploadSection(ctx: PageContext, href: string, d: Dataset, maxBytes: number): SafeHtml {
  const modes = modesFor(d);
  const preferred: LoadMode = d.recordCount === 0 ? 'create' : 'append';
  const chosen = modes.includes(preferred) ? preferred : modes[0];
  return html`<h2 id="load-a-file">Load a file</h2>
    <form
      method="post"
      action="${href}/upload"
      enctype="multipart/form-data"
      data-upload
      data-max-bytes="${maxBytes}"
      data-max-words="${fileSize(maxBytes)}"
    >
      ${csrfField(ctx)}
      <label for="load-mode">How the file changes the records</label>
      <select id="load-mode" name="mode">
        ${modes.map((m) => html`<option value="${m}" ${m === chosen ? html`selected` : ''}>${MODE_WORDS[m]}</option>`)}
      </select>
      <label for="load-format">File format</label>
      <select id="load-format" name="format">
        ${CONTENT_TYPES.map((f) => html`<option value="${f}">${FORMAT_WORDS[f]}</option>`)}
      </select>
      <label for="load-file">File</label>
      <input id="load-file" type="file" name="file" required aria-describedby="load-file-hint" />
      <p class="hint" id="load-file-hint">
        Up to ${fileSize(maxBytes)}; it may be gzipped. The load runs as an app's would, and its page shows
        how it goes; no bad row is allowed.
      </p>
      <button type="submit">Load the file</button>
    </form>`;
}

function appsSection(
  ctx: PageContext,
  href: string,
  d: Dataset,
  connected: TagApp[],
  canChange: boolean,
): SafeHtml {
  const { canSee, notConnected } = visibility(d.datasetTags, connected);
  const shared = new Set(d.datasetTags.map((t) => t.platformAppId));
  const summary = html`<p id="apps-that-see">
    ${canSee.length > 0 ? html`Apps that can see it: <strong>${appNames(canSee)}</strong>.` : 'No app can see it.'}
    ${
      notConnected.length > 0
        ? html`Also shared with ${appNames(notConnected)}, which is not connected to the workspace now and
          would see it again if connected.`
        : ''
    }
  </p>`;
  if (!canChange)
    return html`<h2>Which apps can see it</h2>
      ${summary}${HOW_APPS_SEE}`;
  // Every connected app, and any app the dataset is still shared with, so either can be unticked.
  const choices = [
    ...connected.map((a) => ({ id: a.platformAppId, name: a.appName, isConnected: true })),
    ...notConnected.map((t) => ({ id: t.platformAppId, name: t.name, isConnected: false })),
  ];
  return html`<h2>Which apps can see it</h2>
    ${summary}${HOW_APPS_SEE}
    ${
      choices.length > 0
        ? html`<form method="post" action="${href}/apps">
            ${csrfField(ctx)}
            ${checkboxes(
              'Share this dataset with',
              'app',
              choices.map((c) => ({
                value: c.id,
                label: html`${c.name}${c.isConnected ? '' : html` <span class="hint">(not connected)</span>`}`,
                checked: shared.has(c.id),
              })),
            )}
            <p class="hint">
              An app you untick can no longer read, load or delete this dataset: the API answers it as if the
              dataset did not exist.
            </p>
            <button type="submit">Save who can see it</button>
          </form>`
        : html`<p>No app is connected to this workspace.</p>`
    }`;
}

function jobsTable(workspaceId: number, jobs: Job[]): SafeHtml {
  if (jobs.length === 0) return html`<p>No file has been loaded into this dataset yet.</p>`;
  return dataTable(
    ['Load', 'Status', 'Rows read', 'Loaded', 'Rejected', 'Created', 'Ended'],
    jobs.map((j) => [
      ...loadCells(workspaceId, j),
      when(j.dateCreated),
      ENDED[j.currentStatus.status] ? when(j.currentStatus.dateCreated) : '',
    ]),
  );
}

/** A load's cells in a table of loads: the link to its page, its status and its row counts. */
function loadCells(workspaceId: number, j: Job): (SafeHtml | string)[] {
  const status = j.currentStatus;
  const log = status.logData;
  return [
    html`<a href="${jobHref(workspaceId, j.datasetJobId)}">${j.mode} (${j.contentType ?? 'file'})</a>`,
    STATUS_WORDS[status.status],
    count(log?.rowsRead ?? j.progress?.rowsRead),
    status.status === 'Failed' ? 'none (failed)' : count(log?.rowsLoaded),
    count(log?.rowsRejected),
  ];
}

/** Loads per page of a workspace's list of loads. */
export const LOADS_PER_PAGE = 50;

/** Every load of the workspace's datasets, newest first, of one status or of any, a page at a time. */
export function workspaceLoadsPage(
  ctx: PageContext,
  opts: {
    workspaceId: number;
    workspaceName: string;
    status: JobStatus | null;
    page: JobsPage & { datasetNames: Map<string, string> };
    /** Whether this is a later page than the first. */
    later: boolean;
  },
): string {
  const list = `${base(opts.workspaceId)}/loads`;
  const filtered = opts.status !== null ? `status=${opts.status}` : '';
  const next = opts.page.metadata.nextPageToken;
  const rows = opts.page.data.map((j) => {
    const name = opts.page.datasetNames.get(j.datasetId) ?? j.datasetId;
    return [
      html`<a href="${datasetHref(opts.workspaceId, j.datasetId)}">${name}</a>`,
      ...loadCells(opts.workspaceId, j),
      when(j.dateCreated),
    ];
  });
  const newestHref = `${list}${filtered !== '' ? `?${filtered}` : ''}`;
  const olderHref = `${list}?${filtered !== '' ? `${filtered}&` : ''}loads=${encodeURIComponent(next ?? '')}`;
  const newest = html`<a href="${newestHref}">Newest loads</a>`;
  const older = next !== null ? html`<a href="${olderHref}" rel="next">Older loads</a>` : '';
  const title = `Loads of ${opts.workspaceName}`;
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1>
      <form method="get" action="${list}">
        <label for="status">Status</label>
        <select id="status" name="status">
          <option value="" ${opts.status === null ? html`selected` : ''}>Any status</option>
          ${JOB_STATUSES.map(
            (s) =>
              html`<option value="${s}" ${opts.status === s ? html`selected` : ''}>
                ${STATUS_WORDS[s]}
              </option>`,
          )}
        </select>
        <button type="submit" class="secondary">Show</button>
      </form>
      ${
        rows.length > 0
          ? dataTable(['Dataset', 'Load', 'Status', 'Rows read', 'Loaded', 'Rejected', 'Created'], rows)
          : html`<p>
              ${opts.status !== null ? `No load is ${STATUS_WORDS[opts.status].toLowerCase()}.` : 'No load yet.'}
            </p>`
      }
      ${opts.later || next !== null ? html`<p class="pager">${opts.later ? newest : ''} ${older}</p>` : ''}`,
    workspaceTrail({ workspaceId: opts.workspaceId, name: opts.workspaceName }),
  );
}

const count = (n: number | undefined | null) =>
  n === undefined || n === null ? '' : n.toLocaleString('en-US');

/** Links to the first and the next page of one of a page's lists, kept apart by `param` (the
 * list's page token) and brought back to the list's heading. */
function pager(
  href: string,
  param: 'loads' | 'records',
  later: boolean,
  next: string | null,
  words: { first: string; next: string },
): SafeHtml | '' {
  if (!later && next === null) return '';
  return html`<p class="pager">
    ${later ? html`<a href="${href}#${param}">${words.first}</a>` : ''}
    ${next !== null ? html`<a href="${href}?${param}=${encodeURIComponent(next)}#${param}" rel="next">${words.next}</a>` : ''}
  </p>`;
}

function recordsTable(page: RecordsPage, total: number, later: boolean): SafeHtml {
  if (page.rows.length === 0)
    return later ? html`<p>No more records.</p>` : html`<p>The dataset holds no records.</p>`;
  const shown = later
    ? `${page.rows.length} of ${total.toLocaleString('en-US')} records, in key order, after those before.`
    : page.rows.length < total
      ? `The first ${page.rows.length} of ${total.toLocaleString('en-US')} records, in key order.`
      : `All ${page.rows.length} records, in key order.`;
  return html`<p class="hint">${shown}</p>
    ${dataTable(
      page.properties.map((p) => p.name),
      page.rows.map((values) => values.map((v) => html`<span class="cell">${cellValue(v)}</span>`)),
    )}`;
}

/** The confirmation step of deleting a dataset: what is lost, and its name typed to go on. */
export function deleteDatasetPage(
  ctx: PageContext,
  opts: {
    workspaceId: number;
    workspaceName: string;
    dataset: Dataset;
    connected: TagApp[];
    error: string | null;
  },
): string {
  const d = opts.dataset;
  const href = datasetHref(opts.workspaceId, d.datasetId);
  const { canSee } = visibility(d.datasetTags, opts.connected);
  return layout(
    ctx,
    `Delete ${d.name}`,
    html`<h1>Delete ${d.name}?</h1>
      ${errorBox(opts.error)}
      <p>Deleting a dataset cannot be undone. It removes:</p>
      <ul>
        <li>its ${d.recordCount.toLocaleString('en-US')} records and its schema,</li>
        <li>the history of its loads, their row errors, uploaded files and exports,</li>
        <li>
          ${
            canSee.length > 0
              ? html`the access of ${appNames(canSee)}: the API will tell them it does not exist.`
              : 'the dataset for every app.'
          }
        </li>
      </ul>
      <form method="post" action="${href}/delete">
        ${csrfField(ctx)} ${confirmNameField('dataset', d.name, opts.error !== null)}
        <button type="submit" class="danger">Delete this dataset</button>
      </form>
      <p><a href="${href}">Cancel and go back to the dataset</a></p>`,
    [...datasetsTrail(opts), { label: d.name, href }],
  );
}

/** One load: its status timeline, counts, row errors (paged) and the rejected-rows file. */
export function jobPage(
  ctx: PageContext,
  opts: {
    workspaceId: number;
    workspaceName: string;
    datasetName: string;
    job: Job;
    /** The app whose installation asked for the load (null: none recorded). */
    askedBy: string | null;
    /** Who loaded the file from the console (null: an app asked for the load). */
    uploadedBy: string | null;
    timeline: JobStatusEntry[];
    errors: ErrorsPage<JobErrorWithText>;
    /** Whether this page of errors is a later one (a link back to the first is shown). */
    laterErrorsPage: boolean;
    rejectedRowsHref: string | null;
  },
): string {
  const { job } = opts;
  const status = job.currentStatus;
  const log = status.logData;
  const href = jobHref(opts.workspaceId, job.datasetJobId);
  const defects = status.errorData?.errorCount ?? 0;
  const askedFor =
    opts.uploadedBy !== null
      ? uploadedByWords(opts.uploadedBy)
      : madeByWords(opts.askedBy, job.createdBy.displayName);
  return layout(
    ctx,
    `Load of ${opts.datasetName}`,
    html`<h1>Load of ${opts.datasetName}</h1>
      <dl>
        <dt>Status</dt>
        <dd id="job-status">${STATUS_WORDS[status.status]}</dd>
        <dt>What happened</dt>
        <dd>${log?.message ?? ''}</dd>
        <dt>Load ID</dt>
        <dd><code data-copy="the Load ID">${job.datasetJobId}</code></dd>
        <dt>Mode</dt>
        <dd>${MODE_WORDS[job.mode]}${job.dryRun ? ' (dry run: nothing changed)' : ''}</dd>
        <dt>File format</dt>
        <dd>${job.contentType ?? 'not known yet'}</dd>
        ${
          job.progress?.bytesTotal !== undefined && job.progress.bytesTotal !== null
            ? html`<dt>File size</dt>
                <dd>${fileSize(job.progress.bytesTotal)}</dd>`
            : ''
        }
        <dt>Asked for by</dt>
        <dd>${askedFor}</dd>
      </dl>
      <h2>Timeline</h2>
      <ol id="timeline">
        ${opts.timeline.map(
          (e) =>
            html`<li><strong>${STATUS_WORDS[e.status]}</strong>, ${when(e.dateCreated)}${message(e)}</li>`,
        )}
      </ol>
      <h2>Counts</h2>
      ${
        loadStillRuns(status.status)
          ? html`<p class="hint" id="refreshing">
              This page reloads itself every ${RUNNING_LOAD_REFRESH_SECONDS} seconds until the load ends.
            </p>`
          : ''
      }
      <dl id="counts">
        ${
          status.status === 'Running'
            ? html`<dt>Read so far</dt>
                <dd id="progress">${readingProgress(job)}</dd>`
            : html`<dt>Rows read</dt>
                <dd>${count(log?.rowsRead ?? job.progress?.rowsRead) || '0'}</dd>`
        }
        <dt>Rows loaded</dt>
        <dd>${recordsLoaded(status.status, log?.rowsLoaded)}</dd>
        <dt>Rows rejected</dt>
        <dd>${count(log?.rowsRejected) || '0'}</dd>
        ${
          log?.recordsDeleted !== undefined
            ? html`<dt>Records deleted</dt>
                <dd>${count(log.recordsDeleted) || '0'}</dd>
                <dt>Keys that matched no record</dt>
                <dd>${count(log.keysNotFound) || '0'}</dd>`
            : ''
        }
        <dt>Problems found</dt>
        <dd>${defects.toLocaleString('en-US')}</dd>
        <dt>Bad rows allowed</dt>
        <dd>${job.maxBadRecords.toLocaleString('en-US')}</dd>
      </dl>
      <h2>Row errors</h2>
      ${errorsSection(href, opts.errors, opts.laterErrorsPage, opts.rejectedRowsHref)}`,
    [...datasetsTrail(opts), { label: opts.datasetName, href: datasetHref(opts.workspaceId, job.datasetId) }],
  );
}

const message = (e: JobStatusEntry) => (e.logData?.message ? `: ${e.logData.message}` : '');

function errorsSection(
  href: string,
  errors: ErrorsPage<JobErrorWithText>,
  later: boolean,
  rejectedRowsHref: string | null,
): SafeHtml {
  const download =
    rejectedRowsHref !== null
      ? html`<p>
          <a href="${rejectedRowsHref}" download>Download the rejected rows (CSV)</a>:
          <span class="hint">every problem with its line number and the row as it was in the file.</span>
        </p>`
      : '';
  if (errors.data.length === 0 && !later)
    return html`<p>No row errors.</p>
      ${download}`;
  const next = errors.metadata.nextPageToken;
  return html`<p class="hint">Line numbers count the file's lines; in a CSV file the header is line 1.</p>
    ${download}
    ${dataTable(
      ['Line', 'Property', 'Problem', 'The row in the file'],
      errors.data.map((e) => [e.line, e.property ?? '', e.message, rowText(e)]),
    )}
    <p>
      ${later ? html`<a href="${href}">First errors</a>` : ''}
      ${next !== null ? html`<a href="${href}?errors=${encodeURIComponent(next)}">Next ${ERRORS_PER_PAGE} errors</a>` : ''}
    </p>`;
}
