// The change feed through HTTP, on SQLite and PostgreSQL: a reader that follows it while the
// records change through every load mode and a schema change ends holding exactly the dataset's
// records; unchanged records are no change; small pages lose and repeat nothing; cursors of another
// dataset, installation or deployment, and forged ones, are 400; pruned history is 410; and a
// records read's cursor followed after a load loses nothing and counts nothing twice.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { pruneChangeHistory } from '../../src/domain/changes/batches.js';
import { afterGeneration, encodeCursor } from '../../src/domain/changes/cursor.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type Json } from '../support/fixture.js';
import { allRecords, uploadAndWait } from '../support/loading.js';

type Rec = Record<string, unknown>;
interface Entry {
  op: 'upsert' | 'delete' | 'schemaChanged';
  record?: Rec;
  key?: Rec;
  schemaVersion?: number;
  changes?: { kind: string; property: string }[];
}
interface ChangePage {
  metadata: { count: number; nextCursor: string; hasMore: boolean };
  data: Entry[];
}
interface RecordsPage {
  metadata: { nextPageToken: string | null; changesCursor: string | null };
  data: Rec[];
}
interface ProblemBody {
  status: number;
  code: string;
  detail: string;
}

const PROPS = [
  { name: 'id', type: 'integer', required: true },
  { name: 'name', type: 'string' },
  { name: 'score', type: 'integer' },
];
/** A CSV of `id,name,score` rows. */
const csv = (rows: [number | string, string, number | string][]) =>
  `id,name,score\n${rows.map((r) => r.join(',')).join('\n')}\n`;
const range = (from: number, to: number, name: string): [number, string, number][] =>
  Array.from({ length: to - from + 1 }, (_, i) => [from + i, name, from + i]);

await forEachDatabase('change feed', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  const load = async (
    id: string,
    body: string,
    mode: 'create' | 'replace' | 'append' | 'upsert' | 'delete',
  ) => {
    const job = await uploadAndWait(h, id, body, { mode });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
  };
  const changes = (id: string, since: string, pageSize?: number) =>
    h.api<ChangePage & ProblemBody>(
      'GET',
      `/datasets/${id}/changes?since=${encodeURIComponent(since)}${pageSize !== undefined ? `&pageSize=${pageSize}` : ''}`,
    );
  /** Reads the feed from `since` to its end, page by page; every key once per read. */
  const readFeed = async (id: string, since: string, pageSize = 100) => {
    const entries: Entry[] = [];
    let cursor = since;
    for (let pages = 0; ; pages++) {
      const res = await changes(id, cursor, pageSize);
      assert.equal(res.status, 200, res.text);
      assert.ok(res.json.data.length <= pageSize);
      assert.equal(res.json.metadata.count, res.json.data.length);
      entries.push(...res.json.data);
      cursor = res.json.metadata.nextCursor;
      if (!res.json.metadata.hasMore) break;
      assert.ok(pages < 10_000, 'the feed ends');
    }
    const keys = entries.filter((e) => e.op !== 'schemaChanged').map((e) => keyOf(e));
    assert.equal(new Set(keys).size, keys.length, `a key appears once per read: ${keys.join(',')}`);
    return { entries, cursor };
  };
  const keyOf = (e: Entry) => String((e.record ?? e.key ?? {}).id);
  const firstCursor = async (id: string) => {
    const res = await h.api<RecordsPage>('GET', `/datasets/${id}/records?pageSize=1`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.metadata.changesCursor !== null);
    return res.json.metadata.changesCursor;
  };

  /** A reader's copy of the dataset, kept up to date by the feed alone. */
  class Follower {
    readonly held = new Map<string, Rec>();
    constructor(public cursor: string) {}
    async follow(id: string, pageSize = 3): Promise<Entry[]> {
      const { entries, cursor } = await readFeed(id, this.cursor, pageSize);
      for (const e of entries) {
        if (e.op === 'upsert' && e.record !== undefined) this.held.set(keyOf(e), e.record);
        if (e.op === 'delete') this.held.delete(keyOf(e));
      }
      this.cursor = cursor;
      return entries;
    }
    /** Compares what it holds with a full read, record by record. */
    async matches(id: string): Promise<void> {
      const all = (await allRecords(h, id)) as Rec[];
      const held = [...this.held.values()].sort((a, b) => Number(a.id) - Number(b.id));
      assert.equal(held.length, all.length, 'as many records as the dataset holds');
      all.forEach((record, i) => assert.deepEqual(held[i], record, `record ${String(record.id)}`));
    }
  }
  const summary = (entries: Entry[]) =>
    entries.map((e) => (e.op === 'schemaChanged' ? `schema:${e.schemaVersion}` : `${e.op}:${keyOf(e)}`));

  void it('a follower ends holding exactly the records, through every mode and a schema change', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const reader = new Follower(await firstCursor(id));
    assert.deepEqual(await reader.follow(id), [], 'nothing changed yet');

    await load(id, csv(range(1, 20, 'a')), 'create');
    assert.equal((await reader.follow(id)).length, 20);
    await reader.matches(id);

    await load(id, csv(range(21, 25, 'b')), 'append');
    assert.deepEqual(
      summary(await reader.follow(id)),
      [21, 22, 23, 24, 25].map((k) => `upsert:${k}`),
    );
    await reader.matches(id);

    // An upsert: 3 and 4 change, 5 is sent as it is (no change), 26 is new.
    await load(
      id,
      csv([
        [3, 'c', 3],
        [4, 'a', 40],
        [5, 'a', 5],
        [26, 'c', 26],
      ]),
      'upsert',
    );
    assert.deepEqual(summary(await reader.follow(id)), ['upsert:3', 'upsert:4', 'upsert:26']);
    await reader.matches(id);

    // A delete: 1 and 2 go; 999 named no record and is not a change.
    await load(id, 'id\n1\n999\n2\n', 'delete');
    assert.deepEqual(summary(await reader.follow(id)), ['delete:1', 'delete:2']);
    await reader.matches(id);

    // A replace: 6 changes, 24..26 go, 30 is new; every other record is the same and no change.
    const kept = [...reader.held.values()]
      .filter((r) => Number(r.id) <= 23)
      .map((r): [number, string, number] => [Number(r.id), String(r.name), Number(r.score)])
      .map(([k, n, s]): [number, string, number] => (k === 6 ? [k, 'six', s] : [k, n, s]));
    await load(id, csv([...kept, [30, 'new', 30]]), 'replace');
    // Commit order, then key order within the commit.
    assert.deepEqual(summary(await reader.follow(id)), [
      'upsert:6',
      'delete:24',
      'delete:25',
      'delete:26',
      'upsert:30',
    ]);
    await reader.matches(id);

    // A schema change: its event first, then every record it rewrote (they gained a property).
    const patched = await h.api('PATCH', `/datasets/${id}`, {
      schema: {
        properties: [...PROPS, { name: 'city', type: 'string', default: 'Paris' }],
        primaryKey: ['id'],
      },
    });
    assert.equal(patched.status, 200, patched.text);
    const afterSchema = await reader.follow(id, 4);
    assert.equal(afterSchema[0]?.op, 'schemaChanged');
    assert.equal(afterSchema[0]?.schemaVersion, 2);
    assert.deepEqual(
      afterSchema[0]?.changes?.map((c) => [c.kind, c.property]),
      [['added', 'city']],
    );
    assert.equal(afterSchema.length, 1 + 22);
    await reader.matches(id);

    // Several loads between two reads: each key once, at its latest state.
    await load(id, `id,name,score,city\n7,x,7,Lyon\n31,y,31,\n`, 'upsert');
    await load(id, 'id\n7\n8\n', 'delete');
    await load(id, `id,name,score,city\n8,back,8,Nice\n31,z,31,Nice\n`, 'upsert');
    assert.deepEqual(summary(await reader.follow(id, 2)), ['delete:7', 'upsert:8', 'upsert:31']);
    await reader.matches(id);
  });

  void it('integers keep every digit; a failed load or a dry run shows nothing', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const since = await firstCursor(id);
    // Beyond 2^53 (as text: a JavaScript number would lose the last digit before it is sent).
    await load(id, csv([['9007199254740993', 'big', '-9223372036854775808']]), 'create');
    const res = await changes(id, since);
    assert.match(res.text, /"id":9007199254740993,"name":"big","score":-9223372036854775808/);
    const cursor = res.json.metadata.nextCursor;

    const failed = await uploadAndWait(h, id, csv([[1, 'a', 'not a number']]), { mode: 'upsert' });
    assert.equal(failed.currentStatus.status, 'Failed');
    const dry = await uploadAndWait(h, id, csv([[2, 'a', 2]]), { mode: 'upsert', dryRun: true });
    assert.equal(dry.currentStatus.status, 'Completed');
    const after = await changes(id, cursor);
    assert.deepEqual(after.json.data, []);
    assert.equal(after.json.metadata.hasMore, false);
    const unpublished = await h.database.db
      .selectFrom('dataset_change_batches')
      .select('id')
      .where('dataset_id', '=', id)
      .where('seq', 'is', null)
      .execute();
    assert.deepEqual(unpublished, [], 'a load that does not commit leaves no batch');
  });

  void it('small pages lose nothing and repeat nothing', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const since = await firstCursor(id);
    await load(id, csv(range(1, 40, 'a')), 'create');
    await load(id, csv([...range(1, 10, 'b'), ...range(41, 45, 'b')]), 'upsert');
    await load(id, 'id\n11\n12\n13\n', 'delete');
    const whole = summary((await readFeed(id, since, 10_000)).entries);
    assert.equal(whole.length, 45 - 3 + 3);
    // Commit order: the create's keys not changed later, then the upsert's, then the deletes.
    assert.deepEqual(whole.slice(-3), ['delete:11', 'delete:12', 'delete:13']);
    for (const pageSize of [1, 2, 7]) {
      assert.deepEqual(summary((await readFeed(id, since, pageSize)).entries), whole, `pageSize=${pageSize}`);
    }
  });

  void it('a load committing between two pages of one read loses nothing', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const reader = new Follower(await firstCursor(id));
    await load(id, csv(range(1, 10, 'a')), 'create');
    const first = await changes(id, reader.cursor, 4);
    assert.deepEqual(summary(first.json.data), ['upsert:1', 'upsert:2', 'upsert:3', 'upsert:4']);
    for (const e of first.json.data) reader.held.set(keyOf(e), e.record ?? {});
    reader.cursor = first.json.metadata.nextCursor;
    // Between the pages: 2 (already read) and 8 (not yet) change, 9 goes, 11 comes.
    await load(
      id,
      csv([
        [2, 'b', 2],
        [8, 'b', 8],
        [11, 'b', 11],
      ]),
      'upsert',
    );
    await load(id, 'id\n9\n', 'delete');
    assert.deepEqual(summary(await reader.follow(id, 4)), [
      'upsert:5',
      'upsert:6',
      'upsert:7',
      'upsert:10',
      'upsert:2',
      'upsert:8',
      'upsert:11',
      'delete:9',
    ]);
    await reader.matches(id);
  });

  void it('a schema change that rewrites nothing is its event alone; a keyless dataset logs nothing', async () => {
    const id = await h.defineDataset([...PROPS, { name: 'note', type: 'string', required: true }], ['id']);
    const since = await firstCursor(id);
    await load(id, 'id,name,score,note\n1,a,1,x\n', 'create');
    const patched = await h.api('PATCH', `/datasets/${id}`, {
      schema: { properties: [...PROPS, { name: 'note', type: 'string' }], primaryKey: ['id'] },
    });
    assert.equal(patched.status, 200, patched.text);
    const { entries } = await readFeed(id, since);
    assert.deepEqual(summary(entries), ['upsert:1', 'schema:2']);
    assert.deepEqual(
      entries[1]?.changes?.map((c) => [c.kind, c.property]),
      [['madeOptional', 'note']],
    );

    const keyless = await h.defineDataset(PROPS);
    await load(keyless, csv(range(1, 3, 'a')), 'create');
    await load(keyless, csv(range(1, 3, 'b')), 'replace');
    const batches = await h.database.db
      .selectFrom('dataset_change_batches')
      .select('id')
      .where('dataset_id', '=', keyless)
      .execute();
    assert.deepEqual(batches, []);
  });

  void it('a batch never published (its load crashed) is invisible, and swept a day later', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const since = await firstCursor(id);
    await load(id, csv(range(1, 3, 'a')), 'create');
    // What a worker that died between its capture and its commit leaves: a batch with keys.
    const { id: batch } = await h.database.db
      .insertInto('dataset_change_batches')
      .values({ dataset_id: id, kind: 'records', detail: null, created_at: Date.now() })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { entries } = await readFeed(id, since);
    assert.deepEqual(summary(entries), ['upsert:1', 'upsert:2', 'upsert:3']);
    const day = 24 * 60 * 60 * 1000;
    await pruneChangeHistory(h.database.db, h.services.records, 7 * day, Date.now() + day / 2);
    const left = () =>
      h.database.db.selectFrom('dataset_change_batches').select('id').where('id', '=', batch).execute();
    assert.equal((await left()).length, 1, 'kept while its load may still be running');
    await pruneChangeHistory(h.database.db, h.services.records, 7 * day, Date.now() + day + 1000);
    assert.deepEqual(await left(), []);
    assert.deepEqual(summary((await readFeed(id, since)).entries), ['upsert:1', 'upsert:2', 'upsert:3']);
  });

  void it('refuses cursors that are not the reader’s (400) and history no longer kept (410)', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const other = await h.defineDataset(PROPS, ['id']);
    const since = await firstCursor(id);
    await load(id, csv(range(1, 3, 'a')), 'create');

    const codeOf = async (dataset: string, cursor: string) => {
      const res = await changes(dataset, cursor);
      return `${res.status} ${res.json.code}`;
    };
    assert.equal(await codeOf(other, since), '400 changes_cursor_invalid', 'another dataset');
    const [body = '', signature = ''] = since.split('.');
    const edited = Buffer.from(
      JSON.stringify({ ...(JSON.parse(Buffer.from(body, 'base64url').toString()) as Json), s: 2 }),
    ).toString('base64url');
    assert.equal(await codeOf(id, `${edited}.${signature}`), '400 changes_cursor_invalid', 'edited');
    assert.equal(await codeOf(id, 'garbage'), '400 changes_cursor_invalid', 'forged');
    const installation = (JSON.parse(Buffer.from(body, 'base64url').toString()) as { i: number }).i;
    const secret = h.services.signingSecret;
    const elsewhere = encodeCursor(
      secret,
      { datasetId: id, installationId: installation + 1 },
      afterGeneration(0),
    );
    assert.equal(await codeOf(id, elsewhere), '400 changes_cursor_invalid', 'another installation');
    const otherDeployment = encodeCursor(
      `${secret}-other`,
      { datasetId: id, installationId: installation },
      afterGeneration(0),
    );
    assert.equal(await codeOf(id, otherDeployment), '400 changes_cursor_invalid', 'another deployment');
    const missing = await h.api<ProblemBody>('GET', `/datasets/${id}/changes`);
    assert.equal(missing.status, 400);
    const badSize = await h.api<ProblemBody>('GET', `/datasets/${id}/changes?since=${since}&pageSize=0`);
    assert.equal(badSize.status, 400);

    const noKey = await h.defineDataset(PROPS);
    const keyless = await h.api<RecordsPage>('GET', `/datasets/${noKey}/records`);
    assert.equal(keyless.json.metadata.changesCursor, null);
    const refused = await changes(noKey, since);
    assert.equal(`${refused.status} ${refused.json.code}`, '409 dataset_has_no_primary_key');

    // Past the retention the history is pruned: 410, and a new read gives a cursor that works.
    const pruned = await pruneChangeHistory(h.database.db, h.services.records, 1, Date.now() + 1000);
    assert.ok(pruned >= 1);
    const gone = await changes(id, since);
    assert.equal(`${gone.status} ${gone.json.code}`, '410 changes_cursor_expired');
    assert.match(gone.json.detail, /Read every record again/);
    const fresh = await changes(id, await firstCursor(id));
    assert.equal(fresh.status, 200, fresh.text);
    assert.deepEqual(fresh.json.data, []);
  });

  void it('a records read, then a load, then the feed: nothing lost, nothing twice', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await load(id, csv(range(1, 12, 'a')), 'create');
    // A paged read of the whole dataset: every page gives the same cursor.
    const copy = new Map<string, Rec>();
    let token: string | null = null;
    const cursors = new Set<string | null>();
    do {
      const q: string = `pageSize=5${token !== null ? `&pageToken=${token}` : ''}`;
      const page = await h.api<RecordsPage>('GET', `/datasets/${id}/records?${q}`);
      for (const r of page.json.data) copy.set(String(r.id), r);
      cursors.add(page.json.metadata.changesCursor);
      token = page.json.metadata.nextPageToken;
    } while (token !== null);
    assert.equal(cursors.size, 1);
    // An export link taken now, downloaded after the load: it gives this generation, and its cursor.
    const retrieved = await fetch(`${h.baseUrl}/api/v1/datasets/${id}/records:retrieve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'json' }),
    });
    const link = (await retrieved.json()) as { url: string; changesCursor: string };
    assert.equal(retrieved.headers.get('dx-changes-cursor'), link.changesCursor);

    await load(
      id,
      csv([
        [2, 'changed', 2],
        [13, 'new', 13],
      ]),
      'upsert',
    );
    await load(id, 'id\n5\n', 'delete');

    const reader = new Follower([...cursors][0] ?? '');
    for (const [k, r] of copy) reader.held.set(k, r);
    assert.deepEqual(summary(await reader.follow(id)), ['upsert:2', 'upsert:13', 'delete:5']);
    await reader.matches(id);

    const download = await fetch(link.url);
    const exported = new Follower(link.changesCursor);
    for (const line of (await download.text()).split('\n').filter((l) => l !== '')) {
      const r = JSON.parse(line) as Rec;
      exported.held.set(String(r.id), r);
    }
    assert.equal(exported.held.size, 12, 'the export gives the records of its call');
    await exported.follow(id);
    await exported.matches(id);
  });
});

await forEachDatabase('change feed off', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target, { CHANGES_RETENTION_HOURS: '0' });
  });
  after(() => h.close());

  void it('records no changes, reads give no cursor and the feed answers 409 change_feed_off', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    for (const mode of ['create', 'upsert'] as const) {
      const job = await uploadAndWait(h, id, csv(range(1, 3, mode)), { mode });
      assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    }
    const changed = await h.api('PATCH', `/datasets/${id}`, {
      schema: { properties: [...PROPS, { name: 'note', type: 'string' }], primaryKey: ['id'] },
    });
    assert.equal(changed.status, 200, changed.text);

    const page = await h.api<RecordsPage>('GET', `/datasets/${id}/records`);
    assert.equal(page.status, 200, page.text);
    assert.equal(page.json.data.length, 3);
    assert.equal(page.json.metadata.changesCursor, null);
    // No cursor is ever given out: whatever a client sends, the feed is off.
    const feed = await h.api<ProblemBody>('GET', `/datasets/${id}/changes?since=anything`);
    assert.equal(feed.status, 409, feed.text);
    assert.equal(feed.json.code, 'change_feed_off');
    const batches = await h.database.db
      .selectFrom('dataset_change_batches')
      .select('id')
      .where('dataset_id', '=', id)
      .execute();
    assert.deepEqual(batches, [], 'no load or schema change wrote to the change log');
  });
});
