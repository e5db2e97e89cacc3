// The client's change feed (DxClient.changes) against the running service on both engines: it
// pages through every change, its cursor ends where the next read starts, a reader that stops
// early keeps a cursor that loses nothing, and an expired cursor is a typed 410 problem.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { DxClient, isDxProblem, type ChangeEntry } from '@dataset-exchange/client';
import { pruneChangeHistory } from '../../src/domain/changes/batches.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { uploadAndWait } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer', required: true },
  { name: 'name', type: 'string' },
];
const keyOf = (c: ChangeEntry) => String((c.record ?? c.key ?? {}).id);

await forEachDatabase('client change feed', (target) => {
  let h: Fixture;
  let dx: DxClient;
  before(async () => {
    h = await startFixture(target);
    dx = new DxClient({ baseUrl: h.baseUrl, accessToken: h.token });
  });
  after(() => h.close());

  const load = async (id: string, body: string, mode: 'create' | 'upsert' | 'delete') => {
    const job = await uploadAndWait(h, id, body, { mode });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
  };

  void it('changes() pages through every change and ends on the cursor to keep', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const [first] = await collectPages(dx, id);
    const since = first ?? '';
    await load(id, `id,name\n${Array.from({ length: 7 }, (_, i) => `${i + 1},a`).join('\n')}\n`, 'create');
    await load(id, 'id\n3\n', 'delete');

    const feed = dx.changes(id, since, { pageSize: 2 });
    const seen: string[] = [];
    for await (const change of feed) seen.push(`${change.op}:${keyOf(change)}`);
    assert.deepEqual(seen, [
      'upsert:1',
      'upsert:2',
      'upsert:4',
      'upsert:5',
      'upsert:6',
      'upsert:7',
      'delete:3',
    ]);

    // The kept cursor: nothing more until the next load, then only that load's change.
    const quiet: ChangeEntry[] = [];
    for await (const change of dx.changes(id, feed.cursor)) quiet.push(change);
    assert.deepEqual(quiet, []);
    await load(id, 'id,name\n2,b\n', 'upsert');
    const next = dx.changes(id, feed.cursor);
    const after: ChangeEntry[] = [];
    for await (const change of next) after.push(change);
    assert.deepEqual(after, [{ op: 'upsert', record: { id: 2, name: 'b' } }]);

    // A reader that stops after the first page keeps a cursor from which it loses nothing.
    const partial = dx.changes(id, since, { pageSize: 3 });
    const taken: string[] = [];
    for await (const change of partial) {
      taken.push(keyOf(change));
      if (taken.length === 3) break;
    }
    const rest: string[] = [];
    for await (const change of dx.changes(id, partial.cursor, { pageSize: 3 })) rest.push(keyOf(change));
    assert.deepEqual([...taken, ...rest].sort(), ['1', '2', '3', '4', '5', '6', '7']);
  });

  void it('an expired cursor is a typed 410 problem', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const [since = ''] = await collectPages(dx, id);
    await load(id, 'id,name\n1,a\n', 'create');
    await pruneChangeHistory(h.database.db, h.services.records, 1, Date.now() + 1000);
    await assert.rejects(
      async () => {
        for await (const change of dx.changes(id, since)) assert.fail(JSON.stringify(change));
      },
      (err: unknown) => isDxProblem(err) && err.status === 410 && err.code === 'changes_cursor_expired',
    );
  });
});

/** The changesCursor of each page of a records read. */
async function collectPages(dx: DxClient, id: string): Promise<string[]> {
  const cursors: string[] = [];
  for await (const page of dx.recordPages(id)) cursors.push(page.metadata.changesCursor ?? '');
  return cursors;
}
