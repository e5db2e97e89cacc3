// The first vertical slice: uploadUrl → PUT → job Completed → dataset counts the records.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';

await forEachDatabase('upload URL slice', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  void it('uploads a CSV and completes the job', async () => {
    const id = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
        { name: 'active', type: 'boolean' },
      ],
      ['id'],
    );
    const res = await h.api<{ url: string; jobId: string; datasetId: string }>(
      'POST',
      `/datasets/${id}/uploadUrl`,
      { contentType: 'csv' },
    );
    assert.equal(res.status, 202, res.text);
    assert.equal(res.json.datasetId, id);
    const put = await fetch(res.json.url, {
      method: 'PUT',
      headers: { 'content-type': 'text/csv' },
      body: 'id,name,active\n1,Ann,true\n2,Bob,false\n1,Ann2,1\n',
    });
    assert.equal(put.status, 200, await put.text());
    const job = await h.waitForJob(res.json.jobId);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.deepEqual(job.currentStatus.logData, {
      message: 'Loaded 2 records.',
      rowsRead: 3,
      rowsRejected: 0,
      rowsLoaded: 2,
      duplicatesCollapsed: 1,
    });
    const ds = await h.api<{ recordCount: number; dateLastRecordUpdated: string | null }>(
      'GET',
      `/datasets/${id}`,
    );
    assert.equal(ds.json.recordCount, 2);
    assert.notEqual(ds.json.dateLastRecordUpdated, null);
  });
});
