// The console's datasets and loads pages in Chromium, on SQLite and PostgreSQL, driven as the
// owner drives them: a load that fails is read with its row errors and line numbers, and its
// rejected rows downloaded; taking an app's access away makes the API answer that app 404 while
// the other app still reads; the pages fit 375 px and pass the page checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { consoleSuite, PHONE } from './support/harness.js';
import { pageProblems } from './support/a11y.js';
import { openWorkspace, workspaceWithOwner } from './support/people.js';
import { callApi, connectApp, defineDataset, loadCsv, newApp, tokenFor } from './support/apps.js';

// Line 3 (the header is line 1) has an id that is not an integer.
const BAD_CSV = ['id,name', '1,Ada', 'x,Bad', '2,Bo', ''].join('\n');
const GOOD_CSV = ['id,name', '1,Ada', '2,Bo', ''].join('\n');
let counter = 0;

await consoleSuite('console datasets in Chromium', (c) => {
  /** A workspace with its signed-in owner and two connected apps, each with a token. */
  async function campaign(viewport?: { width: number; height: number }) {
    const name = `Riverside Campaign ${++counter}`;
    const { workspaceId, workspaceKey, owner } = await workspaceWithOwner(c, name, viewport);
    const canvass = await newApp(c, `Canvass App ${counter}`);
    const survey = await newApp(c, `Survey App ${counter}`);
    const canvassToken = await tokenFor(c, canvass, await connectApp(c, canvass, workspaceId), workspaceKey);
    const surveyToken = await tokenFor(c, survey, await connectApp(c, survey, workspaceId), workspaceKey);
    const datasetName = `Volunteers ${counter}`;
    const datasetId = await defineDataset(
      c,
      canvassToken,
      datasetName,
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string', required: true },
      ],
      ['id'],
    );
    return { name, workspaceId, owner, canvass, survey, canvassToken, surveyToken, datasetId, datasetName };
  }

  /** From the workspace page to a dataset's page, by the links a person follows. */
  async function openDataset(page: Page, workspaceName: string, datasetName: string) {
    await openWorkspace(page, workspaceName);
    await page.getByRole('link', { name: 'Datasets and loads' }).click();
    await page.getByRole('link', { name: datasetName, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: datasetName }).waitFor();
  }

  test('the owner watches a load fail and reads its row errors with line numbers', async () => {
    const w = await campaign();
    const load = await loadCsv(c, w.canvassToken, w.datasetId, BAD_CSV, 0);
    assert.equal(load.status, 'Failed');
    const page = w.owner.page;
    await openDataset(page, w.name, w.datasetName);
    const loads = page.getByRole('table').filter({ hasText: 'Failed' });
    assert.equal(await loads.count(), 1, 'the failed load is listed');
    await loads.getByRole('link').first().click();
    await page.getByRole('heading', { level: 1, name: `Load of ${w.datasetName}` }).waitFor();
    assert.match(await page.getByRole('main').innerText(), /Failed/);
    const errors = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Line' }) });
    const row = errors.getByRole('row').filter({ has: page.getByRole('cell', { name: '3', exact: true }) });
    assert.equal(await row.count(), 1, await errors.innerText());
    assert.match(await row.innerText(), /\bid\b/);
    assert.match(await row.innerText(), /x,Bad/, 'the row as the file had it');
    // The script's enhancements: a recent instant reads as relative, its title keeps local and UTC.
    const first = page.locator('#timeline time').first();
    assert.match(await first.innerText(), /ago|now/);
    assert.match(
      (await first.getAttribute('title')) ?? '',
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d .* \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/,
    );
    // … and a copy button beside the Load ID puts the ID on the clipboard.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy the Load ID' }).click();
    await page.getByRole('button', { name: 'Copy the Load ID' }).filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), load.jobId);
    // The rejected rows, downloaded as a person does it: the file holds the bad row.
    const link = page.getByRole('link', { name: 'Download the rejected rows (CSV)' });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const csv = await readFile(await download.path(), 'utf8');
    assert.match(csv, /x,Bad|"x","Bad"/);
    assert.doesNotMatch(csv, /Ada/);
  });

  test("the owner takes an app's access away; the API then answers it 404, the other app still reads", async () => {
    const w = await campaign();
    assert.equal((await loadCsv(c, w.canvassToken, w.datasetId, GOOD_CSV)).status, 'Completed');
    for (const token of [w.canvassToken, w.surveyToken])
      assert.equal((await callApi(c, token, 'GET', `/datasets/${w.datasetId}`)).status, 200);
    const page = w.owner.page;
    await openDataset(page, w.name, w.datasetName);
    const survey = page.getByLabel(w.survey.app.name);
    assert.equal(await survey.isChecked(), true);
    await survey.uncheck();
    await page.getByRole('button', { name: 'Save who can see it' }).click();
    await page.waitForLoadState();
    assert.equal(await page.getByLabel(w.survey.app.name).isChecked(), false);
    assert.equal(await page.getByLabel(w.canvass.app.name).isChecked(), true);
    assert.equal((await callApi(c, w.surveyToken, 'GET', `/datasets/${w.datasetId}`)).status, 404);
    assert.equal((await callApi(c, w.surveyToken, 'GET', `/datasets/${w.datasetId}/records`)).status, 404);
    assert.equal((await callApi(c, w.canvassToken, 'GET', `/datasets/${w.datasetId}`)).status, 200);
  });

  test('the datasets pages fit 375 px and pass the page checks', async () => {
    const w = await campaign(PHONE);
    await loadCsv(c, w.canvassToken, w.datasetId, BAD_CSV, 1);
    const page = w.owner.page;
    const problems: string[] = [];
    const check = async (what: string) => {
      for (const p of await pageProblems(page)) problems.push(`${what}: ${p}`);
    };
    await openWorkspace(page, w.name);
    await page.getByRole('link', { name: 'Datasets and loads' }).click();
    await check('datasets');
    await page.getByRole('link', { name: w.datasetName, exact: true }).click();
    await check('dataset');
    await page
      .getByRole('link', { name: /\(csv\)/ })
      .first()
      .click();
    await check('load');
    await page.goBack();
    await page.getByRole('link', { name: `Delete ${w.datasetName}…` }).click();
    await check('delete confirmation');
    assert.deepEqual(problems, []);
  });
});
