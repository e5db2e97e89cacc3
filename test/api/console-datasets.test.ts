// The console's datasets and loads through HTTP, on SQLite and PostgreSQL: an app defines a dataset
// and loads a CSV with a bad row through the API; members then read the list, the dataset (schema,
// loads, records) and the load (timeline, counts, row errors, rejected rows); an owner takes an
// app's access away (the app then gets 404 from the API) and deletes the dataset after confirming;
// a viewer is offered no change and refused every one; another workspace's data is not there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import {
  ConsoleBrowser,
  csrfOf,
  signedInMember,
  TEST_PASSWORD,
  unescapeHtml,
} from '../support/console-browser.js';
import {
  DATASETS_PER_PAGE,
  FIRST_RECORDS,
  LOADS_PER_PAGE,
  RECENT_JOBS,
} from '../../src/http/routes/console/pages-datasets.js';
import { accessToken, onboardApp, ownToken, callApi } from '../support/onboarding.js';
import { putFile } from '../support/loading.js';
import { connectInstallation } from '../../src/domain/identity/installations.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { auditRows, CLI_ACTOR } from '../../src/domain/console/audit.js';
import { invitationLink, inviteOperator } from '../../src/domain/console/people.js';
import type { ConsoleRole } from '../../src/domain/console/roles.js';

const PASSWORD = TEST_PASSWORD;
const LONG = 'y'.repeat(300);
// Line 3 is bad (id is not an integer); maxBadRecords=1 leaves it out and loads the other three.
const CSV = ['id,name,note', '1,Ada,short', 'x,Bad,row', `2,Bo,${LONG}`, '3,Cy,', ''].join('\n');
let counter = 0;

await forEachDatabase('console datasets and loads', (target) => {
  let t: Fixture;
  before(async () => {
    t = await startFixture(target);
  });
  after(() => t.close());

  const db = () => consoleDb(t.database.db);
  const email = (who: string) => `${who}.${++counter}@example.org`;

  /** A call to /api/v1 with an app's access token. */
  const api = (token: string, method: string, path: string, body?: unknown) =>
    callApi(t, token, method, path, body);

  /** Polls the load until it ends, and fails unless it ended as `expected`. */
  async function jobEnds(token: string, jobId: string, expected: 'Completed' | 'Failed') {
    for (let i = 0; ; i++) {
      const job = await api(token, 'GET', `/datasets/jobs/${jobId}`);
      const status = (job.json() as { currentStatus: { status: string } }).currentStatus.status;
      if (status === expected) return;
      assert.ok(
        !['Completed', 'Failed', 'Expired'].includes(status) && i < 400,
        `job ${status}: ${job.text}`,
      );
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** A workspace with two connected apps, a dataset both can see, and one finished load with a bad row. */
  async function campaign(csv = CSV, maxBadRecords = 1) {
    const canvass = await onboardApp(t, `Canvass App ${++counter}`);
    const survey = await onboardApp(t, `Survey App ${++counter}`, 'ES256');
    const surveyInstallation = await connectInstallation(t.database.db, survey.app.id, canvass.workspaceId);
    const canvassToken = await ownToken(t, canvass);
    const surveyToken = await accessToken(t, survey, surveyInstallation.id, canvass.workspaceKey);
    const created = await api(canvassToken, 'POST', '/datasets', {
      name: `Volunteers <b>${++counter}</b>`,
      schema: {
        properties: [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'string', required: true },
          { name: 'note', type: 'string' },
        ],
        primaryKey: ['id'],
      },
    });
    assert.equal(created.status, 201, created.text);
    const { datasetId, name } = created.json() as { datasetId: string; name: string };
    const upload = await api(
      canvassToken,
      'POST',
      `/datasets/${datasetId}/uploadUrl?maxBadRecords=${maxBadRecords}`,
      {
        contentType: 'csv',
      },
    );
    assert.equal(upload.status, 202, upload.text);
    const { url, jobId } = upload.json() as { url: string; jobId: string };
    assert.equal((await putFile(url, csv)).status, 200);
    await jobEnds(canvassToken, jobId, 'Completed');
    return {
      workspaceId: canvass.workspaceId,
      canvass: { id: canvass.app.id, name: canvass.app.name, token: canvassToken },
      survey: { id: survey.app.id, name: survey.app.name, token: surveyToken },
      datasetId,
      name,
      jobId,
    };
  }

  /** An app's replace load of `csv` into a dataset, its file stored; returns its job. */
  async function replaceRecords(token: string, datasetId: string, csv: string): Promise<string> {
    const upload = await api(token, 'POST', `/datasets/${datasetId}/uploadUrl?mode=replace`, {
      contentType: 'csv',
    });
    assert.equal(upload.status, 202, upload.text);
    const { url, jobId } = upload.json() as { url: string; jobId: string };
    assert.equal((await putFile(url, csv)).status, 200);
    return jobId;
  }

  /** A member who accepted an invitation and is signed in. */
  async function member(workspaceId: number, role: ConsoleRole) {
    const address = email(role);
    return { b: await signedInMember(t, workspaceId, role, address, role), address };
  }

  const escaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

  test("a dataset's page shows the schema an app changed, with its version", async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'viewer');
    const changed = await api(c.canvass.token, 'PATCH', `/datasets/${c.datasetId}`, {
      schema: {
        properties: [
          { name: 'id', type: 'integer' },
          { name: 'full_name', type: 'string', required: true, renamedFrom: 'name' },
          { name: 'note', type: 'string' },
          { name: 'city', type: 'string' },
        ],
      },
    });
    assert.equal(changed.status, 200, changed.text);
    const page = await b.get(`/console/workspaces/${c.workspaceId}/datasets/${c.datasetId}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<span id="schema-version">Schema version 2<\/span>/);
    assert.match(page.body, /<td><code>full_name<\/code><\/td>\s*<td>string<\/td>\s*<td>yes<\/td>/);
    assert.match(page.body, /<td><code>city<\/code><\/td>\s*<td>string<\/td>\s*<td>no<\/td>/);
    assert.doesNotMatch(page.body, /<td><code>name<\/code><\/td>/);
  });

  test('the owner reads the datasets, a dataset and its load with the failed row and its line', async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'owner');
    const base = `/console/workspaces/${c.workspaceId}`;

    const home = await b.get(base);
    assert.match(home.body, new RegExp(`href="${base}/datasets"`));

    const list = await b.get(`${base}/datasets`);
    assert.equal(list.statusCode, 200);
    assert.ok(list.body.includes(`>${escaped(c.name)}</a>`), 'the name, escaped');
    assert.doesNotMatch(list.body, /<b>/);
    const row = list.body.slice(list.body.indexOf(escaped(c.name)));
    assert.match(row, /<td>3<\/td>/, 'the record count');
    assert.match(
      row,
      /<td><time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time><\/td>/,
      'the last update',
    );
    assert.ok(row.includes(c.canvass.name) && row.includes(c.survey.name), 'both apps can see it');

    const page = await b.get(`${base}/datasets/${c.datasetId}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dd id="record-count">3<\/dd>/);
    // The schema: properties, types, the key.
    assert.match(page.body, /<td><code>id<\/code><\/td>\s*<td>integer<\/td>\s*<td>yes<\/td>\s*<td>yes<\/td>/);
    assert.match(page.body, /<td><code>name<\/code><\/td>\s*<td>string<\/td>\s*<td>yes<\/td>\s*<td>no<\/td>/);
    assert.match(page.body, /Records are identified by id\./);
    assert.match(page.body, /<span id="schema-version">Schema version 1<\/span>/);
    // Who made it: the app whose token created it, for the workspace.
    assert.match(
      page.body,
      new RegExp(
        `<dt>Created</dt>\\s*<dd><time [^>]+>[^<]+</time> by the app <strong>${c.canvass.name}</strong>, for `,
      ),
    );
    // The load, with its counts.
    assert.match(page.body, new RegExp(`href="${base}/jobs/${c.jobId}">create \\(csv\\)</a>`));
    assert.match(page.body, /<td>Completed<\/td>\s*<td>4<\/td>\s*<td>3<\/td>\s*<td>1<\/td>/);
    // The first records, a long value cut with its length said.
    assert.match(page.body, /<span class="cell">Ada<\/span>/);
    assert.match(page.body, /<span class="cell">Cy<\/span>/);
    assert.ok(!page.body.includes(LONG), 'the long value is cut');
    assert.match(page.body, new RegExp(`y{120}…\\s*<span class="hint">\\(300 characters`));
    assert.match(page.body, /All 3 records, in key order/);
    // Every record, downloaded from the page: the export's CSV, to members only.
    const recordsHref = `${base}/datasets/${c.datasetId}/records.csv`;
    assert.ok(page.body.includes(`href="${recordsHref}" download`), 'the download is offered');
    const all = await b.get(recordsHref);
    assert.equal(all.statusCode, 200);
    assert.match(all.headers['content-type'] as string, /^text\/csv/);
    assert.match(
      all.headers['content-disposition'] as string,
      new RegExp(`attachment; filename="${c.datasetId}.csv"`),
    );
    assert.equal(all.body, `id,name,note\r\n1,Ada,short\r\n2,Bo,${LONG}\r\n3,Cy,\r\n`);
    assert.equal(
      (await new ConsoleBrowser(() => t.app).get(recordsHref)).statusCode,
      303,
      'not without a session',
    );
    const other = await campaign();
    const { b: outsider } = await member(other.workspaceId, 'owner');
    assert.equal((await outsider.get(recordsHref)).statusCode, 404, "not another workspace's member");
    // … nor through their own workspace's address.
    assert.equal(
      (await outsider.get(`/console/workspaces/${other.workspaceId}/datasets/${c.datasetId}/records.csv`))
        .statusCode,
      404,
    );
    // The owner is offered the change and the delete.
    assert.match(page.body, new RegExp(`action="${base}/datasets/${c.datasetId}/apps"`));
    assert.match(page.body, new RegExp(`href="${base}/datasets/${c.datasetId}/delete"`));
    assert.match(page.body, /<label for="app-0"\s*>/);

    const job = await b.get(`${base}/jobs/${c.jobId}`);
    assert.equal(job.statusCode, 200);
    assert.match(job.body, /<dd id="job-status">Completed<\/dd>/);
    assert.match(
      job.body,
      new RegExp(`<dt>Asked for by</dt>\\s*<dd>the app <strong>${c.canvass.name}</strong>, for `),
    );
    const timeline = /<ol id="timeline">([\s\S]*?)<\/ol>/.exec(job.body)![1]!;
    const steps = [
      ...timeline.matchAll(
        /<strong>([^<]+)<\/strong>, <time datetime="[^"]+">(\d{4}-[\d:\- ]+ UTC)<\/time>/g,
      ),
    ].map((m) => m[1]);
    assert.deepEqual(steps, ['Waiting for the file', 'Waiting to be loaded', 'Loading', 'Completed']);
    assert.match(job.body, /<dt>Rows read<\/dt>\s*<dd>4<\/dd>\s*<dt>Rows loaded<\/dt>\s*<dd>3<\/dd>/);
    assert.match(job.body, /<dt>Rows rejected<\/dt>\s*<dd>1<\/dd>/);
    // The failed row, with its line number (the header is line 1).
    // … and the row as the file had it, beside its error.
    assert.match(
      job.body,
      /<td>3<\/td>\s*<td>id<\/td>\s*<td>[^<]*integer[^<]*<\/td>\s*<td><code class="wrap">x,Bad,row<\/code><\/td>/,
    );
    const csvHref = `${base}/jobs/${c.jobId}/rejected-rows.csv`;
    assert.ok(job.body.includes(`href="${csvHref}"`), 'the rejected rows are linked in the console');
    assert.doesNotMatch(
      job.body,
      /signature=|\/rejected-rows\/[0-9a-f-]{36}\?/,
      'no signed API link on the page',
    );
    const csv = await b.get(csvHref);
    assert.equal(csv.statusCode, 200);
    assert.match(csv.headers['content-type'] as string, /^text\/csv/);
    assert.match(csv.body, /^line,property,message,originalText\r\n3,id,[^\r\n]*,"?x,Bad,row"?\r\n$/);
    // Without a session the file is not given.
    const stranger = await new ConsoleBrowser(() => t.app).get(csvHref);
    assert.equal(stranger.statusCode, 303);
  });

  test('a delete by key shows its mode and counts: records deleted, keys that matched none', async () => {
    const c = await campaign();
    const upload = await api(c.canvass.token, 'POST', `/datasets/${c.datasetId}/uploadUrl?mode=delete`, {
      contentType: 'csv',
    });
    assert.equal(upload.status, 202, upload.text);
    const { url, jobId } = upload.json() as { url: string; jobId: string };
    assert.equal((await putFile(url, 'id\n1\n9\n')).status, 200);
    await jobEnds(c.canvass.token, jobId, 'Completed');
    const { b } = await member(c.workspaceId, 'viewer');
    const page = await b.get(`/console/workspaces/${c.workspaceId}/jobs/${jobId}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /delete by key: the records whose key the file lists are deleted/);
    assert.match(page.body, /<dt>Rows loaded<\/dt>\s*<dd>2<\/dd>/);
    assert.match(
      page.body,
      /<dt>Records deleted<\/dt>\s*<dd>1<\/dd>\s*<dt>Keys that matched no record<\/dt>\s*<dd>1<\/dd>/,
    );
    // A load of whole records says nothing of deletions.
    const create = await b.get(`/console/workspaces/${c.workspaceId}/jobs/${c.jobId}`);
    assert.doesNotMatch(create.body, /Records deleted/);
  });

  test('a load that has not ended reloads its page; a failed one says nothing was loaded', async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'viewer');
    const base = `/console/workspaces/${c.workspaceId}`;
    // Asked for, its file not sent yet.
    const waiting = await api(c.canvass.token, 'POST', `/datasets/${c.datasetId}/uploadUrl?mode=append`, {
      contentType: 'csv',
    });
    assert.equal(waiting.status, 202, waiting.text);
    const waitingId = (waiting.json() as { jobId: string }).jobId;
    const open = await b.get(`${base}/jobs/${waitingId}`);
    assert.equal(open.statusCode, 200);
    assert.equal(open.headers.refresh, '5');
    assert.match(open.body, /This page reloads itself every 5 seconds until the load ends/);
    assert.match(open.body, /<dt>Rows loaded<\/dt>\s*<dd>not yet: the load has not ended<\/dd>/);
    // An ended load does not reload, and shows its file's size.
    const done = await b.get(`${base}/jobs/${c.jobId}`);
    assert.equal(done.headers.refresh, undefined);
    assert.doesNotMatch(done.body, /reloads itself/);
    assert.match(done.body, /<dt>File size<\/dt>\s*<dd>\d+ bytes<\/dd>/);

    // Two bad rows where none is allowed: the load fails and the dataset keeps its records.
    const failing = await api(c.canvass.token, 'POST', `/datasets/${c.datasetId}/uploadUrl?mode=replace`, {
      contentType: 'csv',
    });
    const { url, jobId } = failing.json() as { url: string; jobId: string };
    assert.equal((await putFile(url, 'id,name,note\nx,Bad,row\ny,Bad,row\n')).status, 200);
    await jobEnds(c.canvass.token, jobId, 'Failed');
    const failed = await b.get(`${base}/jobs/${jobId}`);
    assert.match(failed.body, /<dd id="job-status">Failed<\/dd>/);
    assert.match(
      failed.body,
      /<dt>Rows loaded<\/dt>\s*<dd>none: the load failed, the dataset is as it was<\/dd>/,
    );
    const list = await b.get(`${base}/datasets/${c.datasetId}`);
    assert.match(list.body, /<td>Failed<\/td>\s*<td>2<\/td>\s*<td>none \(failed\)<\/td>/);
  });

  test("a dataset's loads and records page with the API's own tokens; a bad token is a 400 page", async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'viewer');
    const href = `/console/workspaces/${c.workspaceId}/datasets/${c.datasetId}`;
    const load = async (csv: string) =>
      jobEnds(c.canvass.token, await replaceRecords(c.canvass.token, c.datasetId, csv), 'Completed');
    // One more load than a page shows, the last with ten records more than a page.
    const rows = FIRST_RECORDS + 10;
    for (let i = 1; i < RECENT_JOBS; i++) await load('id,name,note\n1,Ada,\n');
    await load(
      ['id,name,note', ...Array.from({ length: rows }, (_, i) => `${i + 1},N${i + 1},`), ''].join('\n'),
    );

    const first = await b.get(href);
    assert.equal(first.statusCode, 200);
    const loadsShown = (body: string) => (body.match(/href="[^"]+\/jobs\/[0-9a-f-]{36}"/g) ?? []).length;
    assert.equal(loadsShown(first.body), RECENT_JOBS);
    assert.match(first.body, new RegExp(`The first ${FIRST_RECORDS} of ${rows} records`));
    const older = /<a href="([^"]+\?loads=[^"]+)" rel="next">Older loads<\/a>/.exec(first.body)?.[1];
    const next = /<a href="([^"]+\?records=[^"]+)" rel="next">Next records<\/a>/.exec(first.body)?.[1];
    assert.ok(older !== undefined && next !== undefined, 'both lists link to their next page');

    const olderPage = await b.get(unescapeHtml(older));
    assert.equal(olderPage.statusCode, 200);
    assert.equal(loadsShown(olderPage.body), 1, 'the first load, alone on the second page');
    assert.match(olderPage.body, /<h2 id="loads">Older loads<\/h2>/);
    assert.match(olderPage.body, new RegExp(`<a href="${href}#loads">Newest loads</a>`));
    assert.doesNotMatch(olderPage.body, />Older loads<\/a>/);

    const nextPage = await b.get(unescapeHtml(next));
    assert.equal(nextPage.statusCode, 200);
    assert.match(nextPage.body, new RegExp(`10 of ${rows} records, in key order, after those before`));
    assert.match(nextPage.body, new RegExp(`<span class="cell">N${FIRST_RECORDS + 1}</span>`));
    assert.doesNotMatch(nextPage.body, /<span class="cell">N1<\/span>/);
    assert.doesNotMatch(nextPage.body, />Next records<\/a>/);

    const bad = await b.get(`${href}?records=not-a-token`);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.headers['content-type'] as string, /^text\/html/);
  });

  test('the datasets list pages in name order and finds datasets by name, in any letter case', async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'viewer');
    const define = async (name: string) => {
      const res = await api(c.canvass.token, 'POST', '/datasets', {
        name,
        schema: { properties: [{ name: 'id', type: 'integer' }] },
      });
      assert.equal(res.status, 201, res.text);
    };
    // One more page than the first holds, and two whose names a search finds.
    for (let i = 0; i < DATASETS_PER_PAGE; i++) await define(`List ${String(i).padStart(3, '0')}`);
    await define('Opt-outs 100%');
    await define('OPT-OUTS march');
    const list = `/console/workspaces/${c.workspaceId}/datasets`;
    const names = (body: string) =>
      [...body.matchAll(/\/datasets\/[0-9a-f-]{36}">([^<]*)<\/a>/g)].map((m) => unescapeHtml(m[1] ?? ''));

    const first = await b.get(list);
    assert.equal(first.statusCode, 200);
    assert.equal(names(first.body).length, DATASETS_PER_PAGE);
    const next = /<a href="([^"]+)" rel="next">Next datasets<\/a>/.exec(first.body)?.[1];
    assert.ok(next !== undefined, 'the first page links to the next');
    const second = await b.get(unescapeHtml(next));
    assert.equal(second.statusCode, 200);
    assert.match(second.body, new RegExp(`<a href="${list}">First datasets</a>`));
    assert.doesNotMatch(second.body, /Next datasets/);
    const all = [...names(first.body), ...names(second.body)];
    assert.equal(all.length, DATASETS_PER_PAGE + 3);
    assert.equal(new Set(all).size, all.length, 'no dataset on two pages');
    assert.ok(all.includes(c.name) && all.includes('List 049') && all.includes('OPT-OUTS march'));

    // Any letter case; %, _ and \ are themselves, not patterns.
    const found = async (q: string) => names((await b.get(`${list}?q=${encodeURIComponent(q)}`)).body).sort();
    assert.deepEqual(await found('opt-OUTS'), ['OPT-OUTS march', 'Opt-outs 100%']);
    assert.deepEqual(await found('100%'), ['Opt-outs 100%']);
    assert.deepEqual(await found('1%0'), []);
    assert.deepEqual(await found('_'), []);
    assert.deepEqual(await found('\\'), []);
    const none = await b.get(`${list}?q=${encodeURIComponent('no such name')}`);
    assert.match(none.body, /No datasets whose name holds\s+“no such name”\./);

    const bad = await b.get(`${list}?after=not-a-token`);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.headers['content-type'] as string, /^text\/html/);
  });

  test("a workspace's loads: every dataset's, newest first, filtered by status, paged", async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'viewer');
    // A load that fails (a bad row, none allowed), then enough completed ones for a second page.
    const upload = (csv: string) => replaceRecords(c.canvass.token, c.datasetId, csv);
    const failed = await upload('id,name,note\nx,Bad,\n');
    await jobEnds(c.canvass.token, failed, 'Failed');
    for (let i = 0; i < LOADS_PER_PAGE; i++)
      await jobEnds(c.canvass.token, await upload('id,name,note\n1,A,\n'), 'Completed');
    const list = `/console/workspaces/${c.workspaceId}/loads`;
    const loads = (body: string) => [...body.matchAll(/\/jobs\/([0-9a-f-]{36})"/g)].map((m) => m[1]);

    const failedOnly = await b.get(`${list}?status=Failed`);
    assert.equal(failedOnly.statusCode, 200);
    assert.deepEqual(loads(failedOnly.body), [failed]);
    assert.match(failedOnly.body, new RegExp(`/datasets/${c.datasetId}">${escaped(c.name)}</a>`));

    // The campaign's first load, the failed one and LOADS_PER_PAGE more: two pages, newest first.
    const first = await b.get(list);
    assert.equal(loads(first.body).length, LOADS_PER_PAGE);
    assert.ok(!loads(first.body).includes(failed), 'the failed load is older than a page of newer ones');
    const older = /<a href="([^"]+)" rel="next">Older loads<\/a>/.exec(first.body)?.[1];
    assert.ok(older !== undefined);
    const second = await b.get(unescapeHtml(older));
    assert.deepEqual(loads(second.body), [failed, c.jobId]);
    assert.match(second.body, /Newest loads<\/a>/);

    const none = await b.get(`${list}?status=Expired`);
    assert.match(none.body, /No load is expired/);
    const bad = await b.get(`${list}?status=Lost`);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.headers['content-type'] as string, /^text\/html/);
    // Another workspace's member sees none of it.
    const other = await campaign();
    const stranger = await member(other.workspaceId, 'owner');
    assert.equal((await stranger.b.get(list)).statusCode, 404);
  });

  test("a load's row errors page 100 at a time, in line order", async () => {
    const bad = Array.from({ length: 105 }, (_, i) => `x${i},Bad,row`);
    const c = await campaign(['id,name,note', '1,Ada,ok', ...bad, ''].join('\n'), 200);
    const { b } = await member(c.workspaceId, 'viewer');
    const href = `/console/workspaces/${c.workspaceId}/jobs/${c.jobId}`;
    const lines = (body: string) =>
      [...body.matchAll(/<td>(\d+)<\/td>\s*<td>id<\/td>/g)].map((m) => Number(m[1]));
    const first = await b.get(href);
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      lines(first.body),
      Array.from({ length: 100 }, (_, i) => i + 3),
    );
    assert.match(first.body, /<dt>Problems found<\/dt>\s*<dd>105<\/dd>/);
    const next = /href="([^"]+)">Next 100 errors</.exec(first.body)![1]!.replace(/&amp;/g, '&');
    const second = await b.get(next);
    assert.equal(second.statusCode, 200);
    assert.deepEqual(lines(second.body), [103, 104, 105, 106, 107]);
    assert.doesNotMatch(second.body, /Next 100 errors/);
    assert.ok(second.body.includes(`href="${href}">First errors</a>`));
    const forged = await b.get(`${href}?errors=forged`);
    assert.equal(forged.statusCode, 400, 'a bad page token is a clear 400 page');
    assert.match(forged.headers['content-type'] as string, /^text\/html/);
  });

  test("the owner takes an app's access away: the app then gets 404 through the API", async () => {
    const c = await campaign();
    const { b, address } = await member(c.workspaceId, 'owner');
    const base = `/console/workspaces/${c.workspaceId}`;
    const page = `${base}/datasets/${c.datasetId}`;
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}`)).status, 200);

    const saved = await b.submit(page, `${page}/apps`, { app: c.canvass.id });
    assert.equal(saved.statusCode, 303, saved.body);
    assert.equal(saved.headers.location, `${page}?done=saved`);
    const after = await b.get(`${page}?done=saved`);
    assert.match(after.body, /role="status">Saved\./);
    assert.match(
      after.body,
      new RegExp(`id="apps-that-see">\\s*Apps that can see it: <strong>${c.canvass.name}</strong>`),
    );

    // The app that lost its tag: the dataset, its records and its load are not there for it.
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}`)).status, 404);
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}/records`)).status, 404);
    assert.equal((await api(c.survey.token, 'GET', `/datasets/jobs/${c.jobId}`)).status, 404);
    const listed = (await api(c.survey.token, 'GET', '/datasets')).json() as {
      data: { datasetId: string }[];
    };
    assert.ok(!listed.data.some((d) => d.datasetId === c.datasetId));
    assert.equal((await api(c.canvass.token, 'GET', `/datasets/${c.datasetId}`)).status, 200);

    // Sharing it again gives the access back; unticking every app leaves it to no app.
    assert.equal((await b.submit(page, `${page}/apps`, { app: c.survey.id })).statusCode, 303);
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}`)).status, 200);
    assert.equal((await api(c.canvass.token, 'GET', `/datasets/${c.datasetId}`)).status, 404);
    assert.equal((await b.submit(page, `${page}/apps`, {})).statusCode, 303);
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}`)).status, 404);
    const noApp = await b.get(page);
    assert.equal(noApp.statusCode, 200, 'the console still shows a dataset no app can see');
    assert.match(noApp.body, /No app can see it\./);
    // Both boxes ticked: the form sends `app` twice, and both apps see it again.
    const both = await t.app.inject({
      method: 'POST',
      url: `${page}/apps`,
      headers: {
        cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams([
        ['_csrf', csrfOf(noApp.body)],
        ['app', c.canvass.id],
        ['app', c.survey.id],
      ]).toString(),
    });
    assert.equal(both.statusCode, 303, both.body);
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}`)).status, 200);
    assert.equal((await api(c.canvass.token, 'GET', `/datasets/${c.datasetId}`)).status, 200);
    assert.equal((await b.submit(page, `${page}/apps`, {})).statusCode, 303);
    assert.equal((await b.submit(page, `${page}/apps`, {})).statusCode, 303, 'a save that changes nothing');

    // An app that is not connected to the workspace cannot be given access: a clear 400 page.
    const stranger = await onboardApp(t, 'Stranger App');
    const refused = await b.submit(page, `${page}/apps`, { app: stranger.app.id });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /not connected to this workspace/);

    const rows = (await auditRows(db(), { workspaceId: c.workspaceId })).filter(
      (r) => r.action === 'dataset.apps_changed',
    );
    assert.equal(
      rows.length,
      5,
      'one row per change; the refused one and the one changing nothing wrote none',
    );
    assert.equal(rows.at(-1)!.actor, address);
    assert.ok(rows.at(-1)!.detail!.includes(`no longer with ${c.survey.name}`), rows.at(-1)!.detail!);
    assert.ok(rows.at(-1)!.detail!.includes(c.datasetId));
  });

  test('deleting a dataset needs its name typed; then it is gone for the console and the apps', async () => {
    const c = await campaign();
    const { b, address } = await member(c.workspaceId, 'admin');
    const base = `/console/workspaces/${c.workspaceId}`;
    const page = `${base}/datasets/${c.datasetId}`;
    const confirm = await b.get(`${page}/delete`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /cannot be undone/);
    assert.match(confirm.body, /<label for="confirmName">/);

    const wrong = await b.post(`${page}/delete`, {
      _csrf: csrfOf(confirm.body),
      confirmName: 'something else',
    });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /role="alert"[^>]*>The name you typed/);
    assert.equal((await api(c.canvass.token, 'GET', `/datasets/${c.datasetId}`)).status, 200);

    const tablesBefore = await t.services.records.listTables(c.datasetId);
    assert.ok(tablesBefore.length > 0);
    const done = await b.post(`${page}/delete`, { _csrf: csrfOf(confirm.body), confirmName: c.name });
    assert.equal(done.statusCode, 303, done.body);
    assert.equal(done.headers.location, `${base}/datasets?done=deleted`);
    const list = await b.get(`${base}/datasets?done=deleted`);
    assert.match(list.body, /The dataset was deleted/);
    assert.ok(!list.body.includes(escaped(c.name)));
    assert.equal((await b.get(page)).statusCode, 404);
    assert.equal((await b.get(`${base}/jobs/${c.jobId}`)).statusCode, 404);
    assert.equal((await api(c.canvass.token, 'GET', `/datasets/${c.datasetId}`)).status, 404);
    assert.deepEqual(await t.services.records.listTables(c.datasetId), [], 'the records tables are dropped');
    const rows = (await auditRows(db(), { workspaceId: c.workspaceId })).filter(
      (r) => r.action === 'dataset.deleted',
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.actor, address);
    assert.match(rows[0]!.detail!, new RegExp(`\\(${c.datasetId}\\), 3 records`));
  });

  test('a viewer sees everything, is offered no change, and every change gets 403', async () => {
    const c = await campaign();
    const { b } = await member(c.workspaceId, 'viewer');
    const base = `/console/workspaces/${c.workspaceId}`;
    const page = `${base}/datasets/${c.datasetId}`;
    assert.equal((await b.get(`${base}/datasets`)).statusCode, 200);
    const view = await b.get(page);
    assert.equal(view.statusCode, 200);
    assert.match(view.body, /Apps that can see it/);
    // The only form on the page is the header's sign-out.
    assert.deepEqual(
      [...view.body.matchAll(/<form[^>]*action="([^"]+)"/g)].map((m) => m[1]),
      ['/console/sign-out'],
    );
    assert.doesNotMatch(view.body, /\/delete"/);
    assert.equal((await b.get(`${base}/jobs/${c.jobId}`)).statusCode, 200);
    assert.equal((await b.get(`${base}/jobs/${c.jobId}/rejected-rows.csv`)).statusCode, 200);

    const csrf = csrfOf(view.body);
    assert.equal((await b.get(`${page}/delete`)).statusCode, 403);
    const untag = await b.post(`${page}/apps`, { _csrf: csrf, app: c.canvass.id });
    assert.equal(untag.statusCode, 403);
    assert.match(untag.body, /can look but not change/);
    assert.equal((await b.post(`${page}/delete`, { _csrf: csrf, confirmName: c.name })).statusCode, 403);
    assert.equal((await api(c.survey.token, 'GET', `/datasets/${c.datasetId}`)).status, 200, 'still shared');
    assert.equal((await api(c.canvass.token, 'GET', `/datasets/${c.datasetId}`)).status, 200, 'still there');
    const rows = await auditRows(db(), { workspaceId: c.workspaceId });
    assert.ok(!rows.some((r) => r.action.startsWith('dataset.')), 'nothing changed, nothing logged');
  });

  test("another workspace's datasets and loads are not there (404); the operator acts as an owner", async () => {
    const mine = await campaign();
    const theirs = await campaign();
    const { b } = await member(mine.workspaceId, 'owner');
    const base = `/console/workspaces/${mine.workspaceId}`;
    const csrf = csrfOf((await b.get(`${base}/datasets`)).body);
    for (const url of [
      `${base}/datasets/${theirs.datasetId}`,
      `${base}/datasets/${theirs.datasetId}/delete`,
      `${base}/jobs/${theirs.jobId}`,
      `${base}/jobs/${theirs.jobId}/rejected-rows.csv`,
      `/console/workspaces/${theirs.workspaceId}/datasets`,
      `/console/workspaces/${theirs.workspaceId}/datasets/${theirs.datasetId}`,
      `${base}/datasets/not-an-id`,
      `${base}/jobs/${mine.datasetId}`,
    ]) {
      const res = await b.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.headers['content-type'] as string, /^text\/html/);
    }
    for (const url of [
      `${base}/datasets/${theirs.datasetId}/apps`,
      `${base}/datasets/${theirs.datasetId}/delete`,
    ])
      assert.equal(
        (await b.post(url, { _csrf: csrf, app: mine.canvass.id, confirmName: theirs.name })).statusCode,
        404,
        url,
      );
    assert.equal((await api(theirs.canvass.token, 'GET', `/datasets/${theirs.datasetId}`)).status, 200);
    assert.equal((await api(theirs.survey.token, 'GET', `/datasets/${theirs.datasetId}`)).status, 200);

    // The operator, not a member, may change a workspace's dataset as an owner would.
    const address = email('operator');
    const inv = await inviteOperator(db(), CLI_ACTOR, address);
    const op = new ConsoleBrowser(() => t.app);
    assert.equal(
      (await op.accept(invitationLink(t.config.publicUrl, inv.token), 'Ops', PASSWORD)).statusCode,
      303,
    );
    assert.equal((await op.signIn(address, PASSWORD)).statusCode, 303);
    const page = `/console/workspaces/${theirs.workspaceId}/datasets/${theirs.datasetId}`;
    assert.equal((await op.submit(page, `${page}/apps`, { app: theirs.survey.id })).statusCode, 303);
    assert.equal((await api(theirs.canvass.token, 'GET', `/datasets/${theirs.datasetId}`)).status, 404);
  });
});
