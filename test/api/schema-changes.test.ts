// Schema changes through PATCH /datasets/{id} over HTTP, on SQLite and PostgreSQL: each kind of
// change with records in place (values carried, defaults written, renames, drops gone from pages
// and exports), the schema version, refusals (409) and unclear requests (400), dry runs that
// change nothing, and a load that runs across a schema change.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { changeSchema } from '../../src/domain/datasets/change-schema.js';
import { BUILD_ALLOWANCE_MS, ledgerBuiltTable } from '../../src/domain/datasets/generations.js';
import { dropRetiredTables, RETIRED_TABLE_GRACE_MS } from '../../src/worker/sweep.js';
import type { SchemaUpdateInput } from '../../src/domain/datasets/schema-change.js';
import { ProblemError } from '../../src/errors.js';
import { tablePrefix, type RecordStore, type StagingWriter } from '../../src/storage/records/index.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { allRecords, uploadAndWait } from '../support/loading.js';

interface DatasetBody {
  recordCount: number;
  schemaVersion: number;
  dateLastRecordUpdated: string | null;
  datasetSchema: { properties: { name: string; type: string; required: boolean }[]; primaryKey: string[] };
}
interface ProblemBody {
  code: string;
  detail: string;
  errors: Record<string, string[]>;
}
interface Report {
  dryRun: true;
  schemaVersion: number;
  newSchemaVersion: number;
  changes: { kind: string; property: string; description: string; valuesNotFitting: number }[];
  recordsTouched: number;
  valuesNotFitting: number;
}

type SentProperty = SchemaUpdateInput['properties'][number];
/** `records` with its `createStaging` run through `hook` (given the table and the real build). */
function withStagingHook(
  records: RecordStore,
  hook: (table: string, build: () => Promise<StagingWriter>) => Promise<StagingWriter>,
): RecordStore {
  return new Proxy(records, {
    get(target, prop) {
      if (prop === 'createStaging')
        return (...args: Parameters<RecordStore['createStaging']>) =>
          hook(args[0], () => target.createStaging(...args));
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const PROPS: SentProperty[] = [
  { name: 'id', type: 'integer', required: true },
  { name: 'name', type: 'string', required: true },
  { name: 'score', type: 'integer' },
  { name: 'born', type: 'date' },
  { name: 'note', type: 'string' },
];
const CSV = 'id,name,score,born,note\n1,Ann,10,2001-02-03,x\n2,Bob,,1999-12-31,y\n3,Cy,-7,,\n';

await forEachDatabase('schema changes', (target) => {
  let h: Fixture;
  let files: Server;
  let filesUrl = '';
  let openGate: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  let gatedBody = '';
  before(async () => {
    h = await startFixture(target, { LOAD_URL_ALLOWLIST: '127.0.0.1/32' });
    // /gated.csv sends its header row, then waits for the gate before the rest.
    files = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      const [head = '', ...rest] = gatedBody.split('\n');
      res.write(`${head}\n`);
      void gate.then(() => res.end(rest.join('\n')));
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    openGate();
    files.closeAllConnections();
    await new Promise((resolve) => files.close(resolve));
    await h.close();
  });

  const dataset = async (id: string) => (await h.api<DatasetBody>('GET', `/datasets/${id}`)).json;
  const loaded = async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const job = await uploadAndWait(h, id, CSV);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    return id;
  };
  const patch = <T>(id: string, body: unknown, query = '') =>
    h.api<T>('PATCH', `/datasets/${id}${query}`, body);
  /** PROPS with `edit` applied to the property named `name` (undefined drops it). */
  const propsWith = (
    edits: Record<string, Partial<SentProperty> | undefined>,
    added: SentProperty[] = [],
  ): SentProperty[] => [
    ...PROPS.flatMap((p) => {
      if (!(p.name in edits)) return [p];
      const edit = edits[p.name];
      return edit === undefined ? [] : [{ ...p, ...edit }];
    }),
    ...added,
  ];
  const exported = async (id: string) => {
    const link = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
      contentType: 'csv',
    });
    assert.equal(link.status, 200, link.text);
    const res = await fetch(link.json.url);
    assert.equal(res.status, 200);
    return { url: link.json.url, text: await res.text() };
  };

  void it('a new dataset is at schema version 1; a PATCH of the name alone leaves it there', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    assert.equal((await dataset(id)).schemaVersion, 1);
    const res = await patch<DatasetBody & { name: string }>(id, { name: 'Renamed' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.name, 'Renamed');
    assert.equal(res.json.schemaVersion, 1);
    assert.deepEqual(res.json.datasetSchema.properties, (await dataset(id)).datasetSchema.properties);
    // The same schema sent again is no change: no new version.
    const same = await patch<DatasetBody>(id, { schema: { properties: PROPS, primaryKey: ['id'] } });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.json.schemaVersion, 1);
  });

  void it('adds, renames, widens, makes optional and drops in one change, with the records', async () => {
    const id = await loaded();
    const before = await dataset(id);
    const { url: oldLink, text: oldExport } = await exported(id);
    // A reader paging the old records when the change commits.
    type Page = { metadata: { nextPageToken: string | null }; data: Record<string, unknown>[] };
    const firstPage = await h.api<Page>('GET', `/datasets/${id}/records?pageSize=1`);
    assert.deepEqual(firstPage.json.data, [{ id: 1, name: 'Ann', score: 10, born: '2001-02-03', note: 'x' }]);
    const res = await patch<DatasetBody>(id, {
      schema: {
        properties: [
          { name: 'id', type: 'integer', required: true },
          { name: 'full_name', type: 'string', required: false, renamedFrom: 'name' },
          { name: 'score', type: 'number' },
          { name: 'born', type: 'datetime' },
          { name: 'active', type: 'boolean', required: true, default: true },
          { name: 'tier', type: 'integer' },
        ],
        primaryKey: ['id'],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.schemaVersion, 2);
    assert.equal(res.json.recordCount, 3);
    assert.ok(res.json.dateLastRecordUpdated! > before.dateLastRecordUpdated!, 'records were rewritten');
    assert.deepEqual(res.json.datasetSchema.properties, [
      { name: 'id', type: 'integer', required: true },
      { name: 'full_name', type: 'string', required: false },
      { name: 'score', type: 'number', required: false },
      { name: 'born', type: 'datetime', required: false },
      { name: 'active', type: 'boolean', required: true },
      { name: 'tier', type: 'integer', required: false },
    ]);
    assert.deepEqual(await allRecords(h, id), [
      { id: 1, full_name: 'Ann', score: 10, born: '2001-02-03T00:00:00.000000', active: true, tier: null },
      { id: 2, full_name: 'Bob', score: null, born: '1999-12-31T00:00:00.000000', active: true, tier: null },
      { id: 3, full_name: 'Cy', score: -7, born: null, active: true, tier: null },
    ]);
    // The reader's next page would mix old and new: it is refused, and paging starts again.
    const stale = await h.api<ProblemBody>(
      'GET',
      `/datasets/${id}/records?pageSize=1&pageToken=${firstPage.json.metadata.nextPageToken}`,
    );
    assert.equal(stale.status, 409, stale.text);
    // Filters work on the renamed and added columns.
    const filtered = await h.api<{ data: unknown[] }>('GET', `/datasets/${id}/records?full_name=Bob`);
    assert.deepEqual(filtered.json.data, [
      { id: 2, full_name: 'Bob', score: null, born: '1999-12-31T00:00:00.000000', active: true, tier: null },
    ]);
    // A new export has the new columns; the link made before still gives the old records as they were.
    const { text } = await exported(id);
    assert.equal(
      text,
      'id,full_name,score,born,active,tier\r\n1,Ann,10,2001-02-03T00:00:00.000000,true,\r\n' +
        '2,Bob,,1999-12-31T00:00:00.000000,true,\r\n3,Cy,-7,,true,\r\n',
    );
    assert.ok(!text.includes('note'), 'the dropped column is gone from exports');
    const again = await fetch(oldLink);
    assert.equal(await again.text(), oldExport);
    // The workspace's audit log has the change, in the transaction that made it.
    const audited = await h.database.db
      .withTables<{ console_audit: { action: string; actor: string; detail: string | null } }>()
      .selectFrom('console_audit')
      .select(['action', 'actor', 'detail'])
      .where('action', '=', 'dataset.schema_changed')
      .where('detail', 'like', `%(${id})%`)
      .execute();
    assert.equal(audited.length, 1);
    assert.match(audited[0]?.actor ?? '', /^app /);
    assert.match(
      audited[0]?.detail ?? '',
      /schema version 2: renamed "name" to "full_name"; .*dropped "note"/,
    );
    // A load after the change uses the new schema.
    const job = await uploadAndWait(
      h,
      id,
      'id,full_name,score,born,active,tier\n4,Di,1.5,2020-01-01T10:00:00Z,false,2\n',
      {
        mode: 'append',
      },
    );
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.equal((await dataset(id)).recordCount, 4);
  });

  void it('each kind of change alone bumps the version by one', async () => {
    const id = await loaded();
    const steps: [string, object[]][] = [
      ['madeOptional', propsWith({ name: { required: false } })],
      ['added', propsWith({ name: { required: false } }, [{ name: 'extra', type: 'string' }])],
      [
        'widened',
        propsWith({ name: { required: false }, score: { type: 'number' } }, [
          { name: 'extra', type: 'string' },
        ]),
      ],
      [
        'renamed',
        propsWith({ name: { required: false }, score: { type: 'number' } }, [
          { name: 'extra2', type: 'string', renamedFrom: 'extra' },
        ]),
      ],
      [
        'dropped',
        propsWith({ name: { required: false }, score: { type: 'number' }, note: undefined }, [
          { name: 'extra2', type: 'string' },
        ]),
      ],
    ];
    for (const [i, [kind, properties]] of steps.entries()) {
      const dry = await patch<Report>(id, { schema: { properties } }, '?dryRun=true');
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(
        dry.json.changes.map((c) => c.kind),
        [kind],
        kind,
      );
      const res = await patch<DatasetBody>(id, { schema: { properties } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.schemaVersion, i + 2, kind);
      assert.equal(res.json.recordCount, 3);
    }
    const records = (await allRecords(h, id)) as Record<string, unknown>[];
    assert.deepEqual(Object.keys(records[0] ?? {}), ['id', 'name', 'score', 'born', 'extra2']);
    assert.deepEqual(
      records.map((r) => r.name),
      ['Ann', 'Bob', 'Cy'],
    );
  });

  void it('dryRun reports records touched and values that would not fit, and changes nothing', async () => {
    const id = await loaded();
    const before = await dataset(id);
    const properties = propsWith({ score: { type: 'number' } }, [
      { name: 'active', type: 'boolean', required: true, default: false },
    ]);
    const dry = await patch<Report>(id, { schema: { properties } }, '?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.json, {
      dryRun: true,
      schemaVersion: 1,
      newSchemaVersion: 2,
      changes: [
        {
          kind: 'widened',
          property: 'score',
          description: 'widened "score" from integer to number',
          valuesNotFitting: 0,
        },
        {
          kind: 'added',
          property: 'active',
          description: 'added required "active" (boolean)',
          valuesNotFitting: 0,
        },
      ],
      recordsTouched: 3,
      valuesNotFitting: 0,
    });
    assert.deepEqual(await dataset(id), before);

    // An integer beyond 2^53 would lose digits as a number: counted, and the change is refused.
    const big = await h.defineDataset([{ name: 'n', type: 'integer' }]);
    const job = await uploadAndWait(h, big, 'n\n9007199254740993\n5\n-9223372036854775808\n');
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    const widen = { schema: { properties: [{ name: 'n', type: 'number' }] } };
    const report = await patch<Report>(big, widen, '?dryRun=true');
    assert.equal(report.json.valuesNotFitting, 2);
    assert.equal(report.json.changes[0]?.valuesNotFitting, 2);
    const refused = await patch<ProblemBody>(big, widen);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.code, 'values_do_not_fit');
    assert.match(refused.json.detail, /widened "n" from integer to number: 2/);
    assert.equal((await dataset(big)).schemaVersion, 1);
    const page = await h.api('GET', `/datasets/${big}/records`);
    assert.match(page.text, /"n":9007199254740993\b/, 'the values stay as they were, digit for digit');
  });

  void it('refuses narrowing, a change of the key, and making a property required (409)', async () => {
    const id = await loaded();
    const cases: [object, string, RegExp][] = [
      [
        { properties: propsWith({ born: { type: 'string' } }) },
        'type_narrowing',
        /"born" from date to string/,
      ],
      [
        { properties: propsWith({ score: { type: 'boolean' } }) },
        'type_narrowing',
        /"score" from integer to boolean/,
      ],
      [
        { properties: propsWith({}), primaryKey: ['id', 'name'] },
        'primary_key_change',
        /from \(id\) to \(id, name\)/,
      ],
      [
        { properties: propsWith({ id: undefined }), primaryKey: [] },
        'primary_key_change',
        /"id" would be dropped/,
      ],
      [
        {
          properties: [...propsWith({ id: undefined }), { name: 'key', type: 'integer', renamedFrom: 'id' }],
          primaryKey: ['key'],
        },
        'primary_key_change',
        /renamed to "key"/,
      ],
      [
        { properties: propsWith({ id: { type: 'number' } }) },
        'primary_key_change',
        /"id" would change type from integer to number/,
      ],
      [{ properties: propsWith({ note: { required: true } }) }, 'property_made_required', /"note" required/],
    ];
    for (const [schema, code, detail] of cases) {
      const res = await patch<ProblemBody>(id, { schema });
      assert.equal(res.status, 409, `${JSON.stringify(schema)}: ${res.text}`);
      assert.equal(res.json.code, code);
      assert.match(res.json.detail, detail);
      // A dry run is refused the same way.
      const dry = await patch<ProblemBody>(id, { schema }, '?dryRun=true');
      assert.equal(dry.status, 409);
    }
    const after = await dataset(id);
    assert.equal(after.schemaVersion, 1);
    assert.equal((await allRecords(h, id)).length, 3);
  });

  void it('answers 400 to changes it cannot read', async () => {
    const id = await loaded();
    const cases: [object, string][] = [
      [
        { schema: { properties: propsWith({}, [{ name: 'must', type: 'string', required: true }]) } },
        'schema.properties[5].default',
      ],
      [
        { schema: { properties: propsWith({}, [{ name: 'n2', type: 'integer', default: 'abc' }]) } },
        'schema.properties[5].default',
      ],
      [{ schema: { properties: propsWith({ note: { default: 'z' } }) } }, 'schema.properties[4].default'],
      [
        { schema: { properties: propsWith({}, [{ name: 'x', type: 'string', renamedFrom: 'nope' }]) } },
        'schema.properties[5].renamedFrom',
      ],
      [
        { schema: { properties: propsWith({}, [{ name: 'note2', type: 'string', renamedFrom: 'note' }]) } },
        'schema.properties[5].renamedFrom',
      ],
      [
        { schema: { properties: propsWith({}, [{ name: 'Note', type: 'string' }]) } },
        'schema.properties[5].name',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await patch<ProblemBody>(id, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.ok(field in res.json.errors, `${field} in ${JSON.stringify(res.json.errors)}`);
    }
    const noSchema = await patch<ProblemBody>(id, { name: 'x' }, '?dryRun=true');
    assert.equal(noSchema.status, 400);
    assert.equal((await dataset(id)).schemaVersion, 1);
  });

  void it('a load running across a schema change fails naming the change; the records stay', async () => {
    const id = await loaded();
    gatedBody = 'id,name,score,born,note\n9,Zed,1,,\n';
    gate = new Promise((resolve) => (openGate = resolve));
    const tablesBefore = (await h.services.records.listTables(id)).length;
    const load = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load?mode=replace`, {
      url: `${filesUrl}/gated.csv`,
    });
    assert.equal(load.status, 202, load.text);
    // The job has read the schema and made its table, and waits for the rest of its file.
    for (let i = 0; (await h.services.records.listTables(id)).length === tablesBefore; i++) {
      assert.ok(i < 400, 'the job made no table');
      await new Promise((r) => setTimeout(r, 25));
    }
    const res = await patch<DatasetBody>(id, {
      schema: { properties: propsWith({}, [{ name: 'city', type: 'string' }]) },
    });
    assert.equal(res.status, 200, res.text);
    openGate();
    const job = await h.waitForJob(load.json.jobId);
    assert.equal(job.currentStatus.status, 'Failed', JSON.stringify(job.currentStatus));
    assert.match(
      String(job.currentStatus.logData?.message),
      /schema changed while this load ran \(version 1 to 2: added optional "city" \(string\)\)/,
    );
    const records = (await allRecords(h, id)) as Record<string, unknown>[];
    assert.deepEqual(
      records.map((r) => [r.id, r.city]),
      [
        [1, null],
        [2, null],
        [3, null],
      ],
    );
    assert.equal((await dataset(id)).schemaVersion, 2);
  });

  /** The dataset's row and the caller that created it, as `changeSchema` takes it. */
  const creatorOf = async (id: string) => {
    const row = await h.database.db
      .selectFrom('datasets')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const caller = {
      appId: row.created_by_app_id,
      workspaceId: row.workspace_id,
      ownerUserId: row.created_by_user_id,
    };
    return { row, caller };
  };

  void it('a change that another commit overtakes answers 409, changes nothing and leaves no table', async () => {
    const id = await loaded();
    const { row, caller } = await creatorOf(id);
    const real = h.services.records;
    // While the new table is built, another schema change commits (through the API).
    const racing = withStagingHook(real, async (_table, build) => {
      const writer = await build();
      const other = await patch(id, {
        schema: { properties: propsWith({ name: { required: false } }) },
      });
      assert.equal(other.status, 200, other.text);
      return writer;
    });
    await assert.rejects(
      changeSchema(
        h.database.db,
        racing,
        caller,
        id,
        { schema: { properties: propsWith({ note: undefined }) } },
        false,
      ),
      (err: unknown) => err instanceof ProblemError && err.code === 'dataset_changed_meanwhile',
    );
    const after = await dataset(id);
    assert.equal(after.schemaVersion, 2);
    assert.deepEqual(
      after.datasetSchema.properties.map((p) => p.name),
      PROPS.map((p) => p.name),
      'the overtaken change (a drop) was not made',
    );
    const tables = await real.listTables(id);
    assert.deepEqual(tables, [row.records_table], 'the table of the overtaken change was dropped');
    assert.equal((await allRecords(h, id)).length, 3);
  });

  void it('a table being built is in the ledger dated a day ahead, and leaves it once swapped in', async () => {
    const id = await loaded();
    const before = await h.database.db
      .selectFrom('datasets')
      .select('records_table')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const ledger = () =>
      h.database.db
        .selectFrom('dataset_retired_tables')
        .select(['table_name', 'retired_at'])
        .where('dataset_id', '=', id)
        .execute();
    const sweepDeps = { db: h.database.db, records: h.services.records, objects: h.services.objects };
    const real = h.services.records;
    let seen: { table_name: string; retired_at: number } | undefined;
    let keptMeanwhile = false;
    const watched = withStagingHook(real, async (table, build) => {
      seen = (await ledger()).find((e) => e.table_name === table);
      await dropRetiredTables(sweepDeps, Date.now());
      const writer = await build();
      await dropRetiredTables(sweepDeps, Date.now() + RETIRED_TABLE_GRACE_MS + 1000);
      keptMeanwhile = (await ledger()).some((e) => e.table_name === table);
      return writer;
    });
    const { caller } = await creatorOf(id);
    await changeSchema(
      h.database.db,
      watched,
      caller,
      id,
      { schema: { properties: propsWith({ note: undefined }) } },
      false,
    );
    assert.ok(seen !== undefined, 'the table being built is in the ledger');
    assert.ok(Number(seen.retired_at) >= Date.now() + BUILD_ALLOWANCE_MS - 60_000, 'dated a day ahead');
    assert.ok(keptMeanwhile, 'the sweep leaves it while it is built');
    const after = await h.database.db
      .selectFrom('datasets')
      .select('records_table')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(after.records_table, seen.table_name);
    assert.deepEqual(
      (await ledger()).map((e) => e.table_name),
      [before.records_table],
      'only the table it replaced is in the ledger',
    );
  });

  void it('a table a crash left unswapped is dropped by the sweep a day later', async () => {
    const id = await loaded();
    const real = h.services.records;
    const sweepDeps = { db: h.database.db, records: real, objects: h.services.objects };
    // What a change cut off after its build leaves: a complete table, in the ledger, never swapped in.
    const left = `${tablePrefix(id)}v9_crashed`;
    await ledgerBuiltTable(h.database.db, id, left);
    const staging = await real.createStaging(left, {
      columns: [{ name: 'id', kind: 'int64' }],
      primaryKey: ['id'],
    });
    await staging.finish();
    assert.ok((await real.listTables(id)).includes(left));
    await dropRetiredTables(sweepDeps, Date.now() + RETIRED_TABLE_GRACE_MS + 1000);
    assert.ok((await real.listTables(id)).includes(left), 'kept within the day');
    const later = Date.now() + BUILD_ALLOWANCE_MS + RETIRED_TABLE_GRACE_MS + 1000;
    assert.ok((await dropRetiredTables(sweepDeps, later)) >= 1);
    assert.ok(!(await real.listTables(id)).includes(left), 'dropped a day later');
    assert.equal((await dataset(id)).schemaVersion, 1);
    assert.equal((await allRecords(h, id)).length, 3, 'the records are untouched');
  });

  void it('changes the schema of a dataset without records, with no table', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const res = await patch<DatasetBody>(id, {
      schema: {
        properties: propsWith({ note: undefined }, [
          { name: 'flag', type: 'boolean', required: true, default: false },
        ]),
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.schemaVersion, 2);
    const job = await uploadAndWait(h, id, 'id,name,score,born,flag\n1,A,,,true\n');
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.deepEqual(await allRecords(h, id), [{ id: 1, name: 'A', score: null, born: null, flag: true }]);
  });
});
