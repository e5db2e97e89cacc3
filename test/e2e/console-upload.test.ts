// Loading a file from the console in Chromium, on SQLite and PostgreSQL, at desktop and phone
// widths, as a data manager does it: from the dataset's page, with the script (the upload's progress shown,
// then the load's page) and without it (the plain form post), a good file loaded (the app reads
// the records through the API) and a bad one failed with its row error; a file over the limit is
// stopped in the browser before it is sent; a viewer is offered no form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { consoleSuite, PHONE } from './support/harness.js';
import { pageProblems } from './support/a11y.js';
import { memberInvitedBy, openWorkspace, workspaceWithOwner } from './support/people.js';
import { callApi, connectApp, defineDataset, newApp, tokenFor } from './support/apps.js';

/** The service's UPLOAD_MAX_BYTES in this suite. */
const MAX_BYTES = 1024 * 1024;
const GOOD_CSV = ['id,name', '1,Ada', '2,Bo', ''].join('\n');
// Line 3 (the header is line 1) has an id that is not an integer.
const BAD_CSV = ['id,name', '1,Ada', 'x,Bad', '2,Bo', ''].join('\n');
let counter = 0;

await consoleSuite(
  'console file upload in Chromium',
  (c) => {
    async function campaign(viewport?: { width: number; height: number }) {
      const name = `Harbour Campaign ${++counter}`;
      const { workspaceId, workspaceKey, owner } = await workspaceWithOwner(c, name, viewport);
      const app = await newApp(c, `Canvass App ${counter}`);
      const token = await tokenFor(c, app, await connectApp(c, app, workspaceId), workspaceKey);
      const datasetName = `Volunteers ${counter}`;
      const datasetId = await defineDataset(
        c,
        token,
        datasetName,
        [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'string', required: true },
        ],
        ['id'],
      );
      return { name, workspaceId, owner, token, datasetId, datasetName };
    }

    async function openDataset(page: Page, workspaceName: string, datasetName: string) {
      await openWorkspace(page, workspaceName);
      await page.getByRole('link', { name: 'Datasets and loads' }).click();
      await page.getByRole('link', { name: datasetName, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: datasetName }).waitFor();
    }

    /** On the load's page: waits (it reloads itself) until the load ends as `status`. */
    async function loadEnds(page: Page, datasetName: string, status: 'Completed' | 'Failed') {
      await page.getByRole('heading', { level: 1, name: `Load of ${datasetName}` }).waitFor();
      await page.locator('#job-status', { hasText: status }).waitFor({ timeout: 60_000 });
    }

    test('with the script: the owner loads a CSV, watches it being sent, and the app reads the records', async () => {
      const w = await campaign();
      const page = w.owner.page;
      await openDataset(page, w.name, w.datasetName);
      assert.deepEqual(await pageProblems(page), []);
      const rows = ['id,name', ...Array.from({ length: 40_000 }, (_, i) => `${i + 1},Person ${i + 1}`), ''];
      const csv = rows.join('\n');
      assert.ok(csv.length > 500_000 && csv.length < MAX_BYTES);
      // The browser's upload is held to 256 kB/s, so the file takes a few seconds to go.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      const throttle = (uploadThroughput: number) =>
        cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: 0,
          downloadThroughput: -1,
          uploadThroughput,
        });
      await throttle(256 * 1024);
      await page.getByLabel('How the file changes the records').selectOption('create');
      await page.getByLabel('File format').selectOption('csv');
      await page
        .getByLabel('File', { exact: true })
        .setInputFiles({ name: 'volunteers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByRole('button', { name: 'Load the file' }).click();
      await page.locator('#upload-progress').waitFor({ state: 'visible' });
      await page
        .locator('#upload-status', { hasText: /Sending the file: \d+%|Sent; starting the load/ })
        .waitFor();
      assert.equal(await page.getByRole('button', { name: 'Load the file' }).isDisabled(), true);
      // The bar moves while the file goes: some value strictly between none and all is seen.
      const seen = new Set<number>();
      for (let i = 0; i < 200 && ![...seen].some((v) => v > 0 && v < 100); i++) {
        seen.add(Number(await page.locator('#upload-progress').getAttribute('value')));
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.ok(
        [...seen].some((v) => v > 0 && v < 100),
        `progress values seen: ${[...seen].join(', ')}`,
      );
      await throttle(-1);
      await loadEnds(page, w.datasetName, 'Completed');
      const main = await page.getByRole('main').innerText();
      assert.match(main, new RegExp(`${w.owner.email.replace(/[.+]/g, '\\$&')}, from the console`));
      assert.match(main, /Uploading volunteers\.csv from the console\./);
      assert.match(main, /40,000/);
      assert.deepEqual(await pageProblems(page), []);
      // The app sees the load and its records through the API, as if it had made it.
      const records = await callApi(c, w.token, 'GET', `/datasets/${w.datasetId}/records?pageSize=2`);
      assert.equal(records.status, 200, records.text);
      // The trail leads back to the dataset, whose list of loads has it, and whose form now
      // offers no "first load".
      await page
        .getByRole('navigation', { name: 'Breadcrumb' })
        .getByRole('link', { name: w.datasetName })
        .click();
      await page.getByRole('heading', { level: 1, name: w.datasetName }).waitFor();
      assert.match(await page.locator('#record-count').innerText(), /40,000/);
      const modes = await page
        .getByLabel('How the file changes the records')
        .locator('option')
        .allInnerTexts();
      assert.ok(!modes.some((m) => m.startsWith('first load')), modes.join(' | '));
    });

    test('with the script: a file over the limit is stopped before it is sent', async () => {
      const w = await campaign();
      const page = w.owner.page;
      await openDataset(page, w.name, w.datasetName);
      await page
        .getByLabel('File', { exact: true })
        .setInputFiles({ name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.alloc(MAX_BYTES + 1, 'a') });
      await page.getByRole('button', { name: 'Load the file' }).click();
      await page.locator('#upload-status', { hasText: 'larger than the limit of 1.0 MB' }).waitFor();
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), w.datasetName);
      const jobs = await callApi(c, w.token, 'GET', `/datasets/${w.datasetId}/jobs`);
      assert.equal((jobs.json as { data: unknown[] }).data.length, 0, jobs.text);
    });

    test('without the script: the form posts, a bad file fails with its row error at line 3', async () => {
      const w = await campaign();
      const page = w.owner.page;
      // The page as a browser without the script has it.
      await page.route('**/console/console.js', (route) => route.abort());
      await openDataset(page, w.name, w.datasetName);
      assert.equal(await page.locator('#upload-progress').count(), 0);
      await page
        .getByLabel('File', { exact: true })
        .setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(BAD_CSV) });
      await page.getByRole('button', { name: 'Load the file' }).click();
      await loadEnds(page, w.datasetName, 'Failed');
      const errors = page
        .getByRole('table')
        .filter({ has: page.getByRole('columnheader', { name: 'Line' }) });
      const row = errors.getByRole('row').filter({ has: page.getByRole('cell', { name: '3', exact: true }) });
      assert.equal(await row.count(), 1, await errors.innerText());
      assert.match(await row.innerText(), /x,Bad/);

      // The good file next, still without the script.
      await page
        .getByRole('navigation', { name: 'Breadcrumb' })
        .getByRole('link', { name: w.datasetName })
        .click();
      await page
        .getByLabel('File', { exact: true })
        .setInputFiles({ name: 'good.csv', mimeType: 'text/csv', buffer: Buffer.from(GOOD_CSV) });
      await page.getByRole('button', { name: 'Load the file' }).click();
      await loadEnds(page, w.datasetName, 'Completed');
    });

    test("at a phone's width: the form fits the page and a file loads", async () => {
      const w = await campaign(PHONE);
      const page = w.owner.page;
      await openDataset(page, w.name, w.datasetName);
      assert.deepEqual(await pageProblems(page), []);
      const form = await page.getByRole('button', { name: 'Load the file' }).boundingBox();
      assert.ok(form !== null && form.x + form.width <= PHONE.width, JSON.stringify(form));
      await page
        .getByLabel('File', { exact: true })
        .setInputFiles({ name: 'good.csv', mimeType: 'text/csv', buffer: Buffer.from(GOOD_CSV) });
      await page.getByRole('button', { name: 'Load the file' }).click();
      await loadEnds(page, w.datasetName, 'Completed');
      assert.deepEqual(await pageProblems(page), []);
      const records = await callApi(c, w.token, 'GET', `/datasets/${w.datasetId}/records`);
      assert.equal((records.json as { data: unknown[] }).data.length, 2, records.text);
    });

    test('a viewer is offered no file form', async () => {
      const w = await campaign();
      const viewer = await memberInvitedBy(c, w.owner, w.workspaceId, 'Viewer');
      await openDataset(viewer.page, w.name, w.datasetName);
      assert.equal(await viewer.page.getByRole('button', { name: 'Load the file' }).count(), 0);
      assert.equal(await viewer.page.getByLabel('File', { exact: true }).count(), 0);
    });
  },
  { UPLOAD_MAX_BYTES: String(MAX_BYTES) },
);
