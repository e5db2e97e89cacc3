// GET answers of datasets, job statuses and records are kept per credential and URL while the
// identity and data epochs hold (migrations 014 and 015, src/http/read-cache.ts). A kept answer is
// sent again only while nothing it was made of has changed, whichever process changed it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { requestUpload, putFile } from '../support/loading.js';
import { readEpochs } from '../../src/domain/identity/credential-cache.js';
import { DATA_TABLES } from '../../src/storage/db/migrations/015_data_epoch.js';
import { ReadCache } from '../../src/http/read-cache.js';
import { accessTokenKey } from '../../src/domain/identity/access-tokens.js';

interface DatasetList {
  data: { datasetId: string; name: string }[];
}

await forEachDatabase('GET answers kept while the epochs hold', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  const names = async () => {
    const res = await h.api<DatasetList>('GET', '/datasets');
    assert.equal(res.status, 200, res.text);
    return res.json.data.map((d) => d.name);
  };

  void it('sends the kept answer while the epochs hold, and a fresh one once a change bumps them', async () => {
    const id = await h.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    const db = h.database.db;
    const first = await names();
    const { data } = await readEpochs(db);
    // A change whose bump is undone: only a kept answer can still show the old name.
    await db.updateTable('datasets').set({ name: 'Renamed underneath' }).where('id', '=', id).execute();
    await sql`update change_epochs set epoch = ${data} where name = 'data'`.execute(db);
    assert.deepEqual(await names(), first, 'the kept answer, the epochs being those it was made under');
    const hits = /^dx_api_kept_answers_total\{result="hit"\} (\d+)/m.exec(
      (await h.app.inject('/metrics')).body,
    );
    assert.ok(Number(hits?.[1]) >= 1, 'counted as a hit in /metrics');
    // The same change as another process makes it: the trigger bumps the epoch.
    await db.updateTable('datasets').set({ name: 'Renamed for real' }).where('id', '=', id).execute();
    assert.ok((await names()).includes('Renamed for real'));
  });

  void it('the data epoch moves on every insert, update and delete of the tables the answers are made of', async () => {
    const db = h.database.db;
    const id = await h.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    const moves = async (change: () => Promise<unknown>) => {
      const before = (await readEpochs(db)).data;
      await change();
      return (await readEpochs(db)).data > before;
    };
    // Inserts through the API (a dataset with its schema, a job with its entry), updates of each
    // table (rows of each now exist), a delete.
    assert.equal(await moves(() => h.defineDataset([{ name: 'id', type: 'integer' }], ['id'])), true);
    assert.equal(await moves(() => requestUpload(h, id, { mode: 'create' })), true, 'a job queued');
    for (const table of DATA_TABLES) {
      const column = sql.ref(SELF_SET[table] ?? '');
      assert.equal(
        await moves(() => sql`update ${sql.table(table)} set ${column} = ${column}`.execute(db)),
        true,
        `an update of ${table}`,
      );
    }
    assert.equal(await moves(() => h.api('DELETE', `/datasets/${id}`)), true, 'a dataset deleted');
    // Within one transaction the epoch moves (once on PostgreSQL, at commit).
    assert.equal(
      await moves(() =>
        db.transaction().execute(async (trx) => {
          await sql`update datasets set name = name`.execute(trx);
          await sql`update dataset_jobs set mode = mode`.execute(trx);
        }),
      ),
      true,
    );
  });

  void it("keeps answers per credential: another app never gets this app's kept list", async () => {
    await h.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    const mine = await h.api<DatasetList>('GET', '/datasets');
    assert.ok(mine.json.data.length > 0);
    const other = await h.otherToken();
    const theirs = await fetch(`${h.baseUrl}/api/v1/datasets`, {
      headers: { authorization: `Bearer ${other}` },
    });
    assert.equal(theirs.status, 200);
    assert.deepEqual(((await theirs.json()) as DatasetList).data, []);
  });

  void it('a credential revoked after its answer was kept is refused', async () => {
    const other = await h.otherToken();
    const get = () =>
      fetch(`${h.baseUrl}/api/v1/datasets`, { headers: { authorization: `Bearer ${other}` } });
    assert.equal((await get()).status, 200);
    assert.equal((await get()).status, 200);
    await h.database.db.deleteFrom('access_tokens').where('token_hash', '=', accessTokenKey(other)).execute();
    assert.equal((await get()).status, 401);
  });
});

await forEachDatabase('kept answers follow loads', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  void it('a job status polled during a load, and a records page read before and after it, are never stale', async () => {
    const id = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['id'],
    );
    const page = async () => {
      const res = await h.api<{ data: { id: number }[] }>('GET', `/datasets/${id}/records?pageSize=100`);
      assert.equal(res.status, 200, res.text);
      return res.json.data.map((r) => r.id);
    };
    assert.deepEqual(await page(), []);
    assert.deepEqual(await page(), []);
    const upload = await requestUpload(h, id, { mode: 'create' });
    const status = async () => {
      const res = await h.api<{ datasetJobStatusName: string }>(
        'GET',
        `/datasets/jobs/${upload.jobId}/logs:current`,
      );
      assert.equal(res.status, 200, res.text);
      return res.json.datasetJobStatusName;
    };
    assert.equal(await status(), 'Created');
    assert.equal(await status(), 'Created');
    const put = await putFile(upload.url, 'id,name\n2,b\n1,a\n');
    assert.equal(put.status, 200);
    const deadline = Date.now() + 20_000;
    let last = await status();
    while (last !== 'Completed' && last !== 'Failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      last = await status();
    }
    assert.equal(last, 'Completed');
    assert.deepEqual(await page(), [1, 2]);
  });
});

describe('ReadCache bounds', () => {
  const epochs = { identity: 1, data: 1 };
  it('keeps no answer larger than its bound, and drops the least recently used past its total', () => {
    const cache = new ReadCache(30, 10);
    cache.set('big', epochs, 'application/json', 'x'.repeat(11));
    assert.equal(cache.get('big', epochs), undefined);
    cache.set('a', epochs, 'application/json', 'a'.repeat(10));
    cache.set('b', epochs, 'application/json', 'b'.repeat(10));
    cache.set('c', epochs, 'application/json', 'c'.repeat(10));
    assert.ok(cache.get('a', epochs) !== undefined); // now the most recently used
    cache.set('d', epochs, 'application/json', 'd'.repeat(10));
    assert.equal(cache.get('b', epochs), undefined, 'b was the least recently used');
    assert.deepEqual(cache.size(), { answers: 3, chars: 30 });
  });

  it('an answer is sent only for the very epochs it was made under', () => {
    const cache = new ReadCache();
    cache.set('k', epochs, 'application/json', '{}');
    assert.equal(cache.get('k', { identity: 1, data: 2 }), undefined);
    assert.equal(cache.get('k', epochs), undefined, 'a stale answer is dropped, not kept for later');
    cache.set('k', epochs, 'application/json', '{}');
    assert.equal(cache.get('k', { identity: 2, data: 1 }), undefined);
    assert.deepEqual(cache.size(), { answers: 0, chars: 0 });
  });
});

/** A column of each data table that an update may set to itself. */
const SELF_SET: Record<string, string> = {
  datasets: 'name',
  dataset_schemas: 'properties',
  dataset_tags: 'created_at',
  dataset_jobs: 'mode',
  dataset_job_logs: 'status_name',
};
