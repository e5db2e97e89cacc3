// GET /datasets/:id/jobs pages like the other lists (pageSize, pageToken, nextPageToken), newest
// first, on both engines; the client's listJobs() follows the pages.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DxClient } from '@dataset-exchange/client';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { requestUpload } from '../support/loading.js';

type Page = { metadata: { count: number; nextPageToken: string | null }; data: { datasetJobId: string }[] };

await forEachDatabase('job pages', (target) => {
  let t: Fixture;
  let datasetId: string;
  const created: string[] = [];
  before(async () => {
    t = await startFixture(target);
    datasetId = await t.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    for (let i = 0; i < 7; i++) created.push((await requestUpload(t, datasetId)).jobId);
  });
  after(() => t.close());

  const page = async (query: string) => {
    const res = await t.api<Page>('GET', `/datasets/${datasetId}/jobs${query}`);
    assert.equal(res.status, 200, res.text);
    return res.json;
  };

  test('answers a page at a time, newest first, and ends with a null token', async () => {
    const whole = await page('');
    assert.equal(whole.metadata.count, 7);
    assert.equal(whole.metadata.nextPageToken, null);
    assert.deepEqual(
      whole.data.map((j) => j.datasetJobId),
      [...created].reverse(),
    );
    const first = await page('?pageSize=3');
    assert.equal(first.metadata.count, 3);
    assert.ok(first.metadata.nextPageToken);
    // A job created while the client pages does not shift the pages still to come.
    const newer = (await requestUpload(t, datasetId)).jobId;
    const second = await page(`?pageSize=3&pageToken=${encodeURIComponent(first.metadata.nextPageToken)}`);
    assert.ok(second.metadata.nextPageToken);
    const third = await page(`?pageSize=3&pageToken=${encodeURIComponent(second.metadata.nextPageToken)}`);
    assert.equal(third.metadata.count, 1);
    assert.equal(third.metadata.nextPageToken, null);
    assert.deepEqual(
      [...first.data, ...second.data, ...third.data].map((j) => j.datasetJobId),
      whole.data.map((j) => j.datasetJobId),
    );
    assert.equal((await page('?pageSize=1')).data[0]?.datasetJobId, newer);
    created.push(newer);
  });

  test('refuses a bad pageSize or pageToken with a 400 problem; another app sees no jobs', async () => {
    for (const query of ['?pageSize=0', '?pageSize=10001', '?pageSize=x', '?pageToken=nonsense']) {
      const res = await t.api<{ status: number; errors: Record<string, string[]> }>(
        'GET',
        `/datasets/${datasetId}/jobs${query}`,
      );
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.ok(
        Object.keys(res.json.errors).some((k) => k.includes('page')),
        res.text,
      );
    }
    const other = await fetch(`${t.baseUrl}/api/v1/datasets/${datasetId}/jobs?pageSize=1`, {
      headers: { authorization: `Bearer ${await t.otherToken()}` },
    });
    assert.equal(other.status, 404);
  });

  test("the client's listJobs() follows every page", async () => {
    const dx = new DxClient({ baseUrl: t.baseUrl, accessToken: t.token });
    const jobs = await dx.listJobs(datasetId, { pageSize: 2 });
    assert.deepEqual(
      jobs.map((j) => j.datasetJobId),
      [...created].reverse(),
    );
  });
});
