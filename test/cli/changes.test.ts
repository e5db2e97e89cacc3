// `dx changes` spawned as a user runs it, against a listening service: the changes as JSON lines,
// the cursor to keep, a cursor file that makes it a sync step, and refusals in one line.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pruneChangeHistory } from '../../src/domain/changes/batches.js';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { uploadAndWait } from '../support/loading.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');

// The command talks HTTP only, so one database suffices; the feed's suites cover both engines.
await onDatabase('sqlite', 'dx changes', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  const dx = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
        env: { ...process.env, DX_API_URL: h.baseUrl, DX_ACCESS_TOKEN: h.token },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const load = async (id: string, body: string, mode: 'create' | 'upsert' | 'delete') => {
    const job = await uploadAndWait(h, id, body, { mode });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
  };
  const readCursor = async (id: string) => {
    const page = await h.api<{ metadata: { changesCursor: string } }>('GET', `/datasets/${id}/records`);
    return page.json.metadata.changesCursor;
  };
  const props = [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string' },
  ];

  void it('prints each change as a JSON line and the cursor to keep', async () => {
    const id = await h.defineDataset(props, ['id']);
    const since = await readCursor(id);
    await load(id, 'id,name\n1,Ann\n2,Bob\n3,Cy\n', 'create');
    await load(id, 'id\n2\n', 'delete');
    const res = await dx('changes', id, '--since', since, '--page-size', '1');
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    assert.deepEqual(lines, [
      { op: 'upsert', record: { id: 1, name: 'Ann' } },
      { op: 'upsert', record: { id: 3, name: 'Cy' } },
      { op: 'delete', key: { id: 2 } },
    ]);
    const kept = /^3 changes; cursor to keep: (\S+)$/m.exec(res.stderr)?.[1];
    assert.ok(kept !== undefined, res.stderr);
    const again = await dx('changes', id, '--since', kept);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /^0 changes; cursor to keep: /m);
  });

  void it('with --cursor-file, each run prints what changed since the last one', async () => {
    const id = await h.defineDataset(props, ['id']);
    const file = join(h.config.dataDir, `cursor-${id}`);
    const none = await dx('changes', id, '--cursor-file', file);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^dx: a cursor is needed/m);
    const first = await dx('changes', id, '--cursor-file', file, '--since', await readCursor(id));
    assert.equal(first.code, 0, first.stderr);
    assert.ok(readFileSync(file, 'utf8').trim().length > 0, 'the cursor is kept');
    await load(id, 'id,name\n1,Ann\n', 'create');
    const second = await dx('changes', id, '--cursor-file', file);
    assert.deepEqual(JSON.parse(second.stdout), { op: 'upsert', record: { id: 1, name: 'Ann' } });
    await load(id, 'id,name\n1,Anna\n', 'upsert');
    const third = await dx('changes', id, '--cursor-file', file);
    assert.deepEqual(JSON.parse(third.stdout), { op: 'upsert', record: { id: 1, name: 'Anna' } });

    // An expired cursor: one line saying what to do, and the kept cursor stays as it was.
    await pruneChangeHistory(h.database.db, h.services.records, 1, Date.now() + 1000);
    const before = readFileSync(file, 'utf8');
    await load(id, 'id,name\n2,Bo\n', 'upsert');
    await pruneChangeHistory(h.database.db, h.services.records, 1, Date.now() + 1000);
    const expired = await dx('changes', id, '--cursor-file', file);
    assert.equal(expired.code, 1);
    assert.match(expired.stderr, /HTTP 410: The changes since this cursor are no longer kept/);
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  void it('refuses bad flags before sending anything', async () => {
    const res = await dx('changes', 'x', '--since', 'c', '--page-size', '0');
    assert.equal(res.code, 1);
    assert.match(res.stderr, /--page-size must be an integer from 1 to 10000/);
  });
});
