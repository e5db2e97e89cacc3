// `dx upload` spawned as a user runs it, against a listening service (api + worker).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');

// The command talks HTTP only, so one database suffices; the loading suites cover both engines.
await onDatabase('sqlite', 'dx upload', (target) => {
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

  it('uploads a file, shows progress and reports the loaded records', async () => {
    const id = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['id'],
    );
    const file = join(h.config.dataDir, 'people.csv');
    writeFileSync(file, 'id,name\n1,Ann\n2,Bob\n2,Bobby\n');
    const res = await dx('upload', id, file);
    assert.equal(res.code, 0, res.stderr);
    // Output to a pipe: plain lines, no redraws; the upload, then the records the job read.
    assert.ok(!res.stderr.includes('\r') && !res.stdout.includes('\r'), JSON.stringify(res.stderr));
    const size = Buffer.byteLength('id,name\n1,Ann\n2,Bob\n2,Bobby\n');
    assert.match(res.stderr, new RegExp(`^uploading 100% \\(${size} B of ${size} B[^\n]*\\)$`, 'm'));
    assert.match(res.stderr, /^loading 100% \(3 rows read[^\n]*\)$/m);
    assert.match(res.stdout, /Completed: 2 records loaded \(3 rows read, 1 duplicate collapsed\)/);

    const bad = join(h.config.dataDir, 'bad.csv');
    writeFileSync(bad, 'id,name\n1,Ann\nx,Bob\n');
    const failed = await dx('upload', id, bad, '--mode', 'replace');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^loading 100% \(2 rows read[^\n]*\)\nFailed: .*\n {2}line 3, id: /m);

    const create = await dx('upload', id, file);
    assert.equal(create.code, 1);
    assert.match(create.stderr, /HTTP 409/);

    const json = join(h.config.dataDir, 'people.ndjson');
    writeFileSync(json, '{"id":7,"name":"J"}\n');
    const replaced = await dx('upload', id, json, '--mode', 'replace', '--json');
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(JSON.parse(replaced.stdout).currentStatus.datasetJobStatusName, 'Completed');

    // One of each: the nouns are singular.
    const one = join(h.config.dataDir, 'one.csv');
    writeFileSync(one, 'id,name\n9,Nine\n');
    const single = await dx('upload', id, one, '--mode', 'replace');
    assert.equal(single.code, 0, single.stderr);
    assert.match(single.stdout, /^Completed: 1 record loaded \(1 row read, 0 duplicates collapsed\)\. Job /m);
    assert.match(single.stderr, /^loading 100% \(1 row read[^\n]*\)$/m);
  });

  it('--mode delete: a file of keys deletes their records; the outcome counts the keys that matched none', async () => {
    const id = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['id'],
    );
    const records = join(h.config.dataDir, 'contacts.csv');
    writeFileSync(records, 'id,name\n1,Ann\n2,Bob\n3,Cy\n');
    assert.equal((await dx('upload', id, records)).code, 0);
    const optOut = join(h.config.dataDir, 'opt-out.csv');
    writeFileSync(optOut, 'id\n2\n9\n');
    const dry = await dx('upload', id, optOut, '--mode', 'delete', '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      /^Dry run completed, nothing changed: 1 record would be deleted, 1 key matched no record; the dataset would hold 2 records \(2 rows read, 0 duplicates collapsed\)\. Job /m,
    );
    const res = await dx('upload', id, optOut, '--mode', 'delete');
    assert.equal(res.code, 0, res.stderr);
    assert.match(
      res.stdout,
      /^Completed: 1 record deleted, 1 key matched no record; the dataset holds 2 records \(2 rows read, 0 duplicates collapsed\)\. Job /m,
    );
    assert.equal((await h.api<{ recordCount: number }>('GET', `/datasets/${id}`)).json.recordCount, 2);
  });

  it('checks the file before anything is sent: a missing file or a directory creates no job', async () => {
    const id = await h.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
    const missing = join(h.config.dataDir, 'missing.csv');
    const res = await dx('upload', id, missing);
    assert.equal(res.code, 1);
    assert.equal(res.stderr, `dx: cannot read ${missing}: there is no such file\n`);
    const dir = await dx('upload', id, h.config.dataDir);
    assert.equal(dir.code, 1);
    assert.equal(dir.stderr, `dx: ${h.config.dataDir} is a directory; name the file to upload\n`);
    const jobs = await h.api<{ data: unknown[] }>('GET', `/datasets/${id}/jobs`);
    assert.equal(jobs.status, 200, jobs.text);
    assert.deepEqual(jobs.json.data, [], 'no upload URL was asked for');
  });

  it('takes --dry-run, --max-bad-records and --resumable; prints row errors and the rejected-rows link', async () => {
    const id = await h.defineDataset(
      [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['id'],
    );
    const file = join(h.config.dataDir, 'some-bad.csv');
    writeFileSync(file, 'id,name\n1,Ann\nx,Bob\n3,Cy\n');
    const dry = await dx('upload', id, file, '--dry-run', '--max-bad-records', '1');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      /^Dry run completed, nothing changed: 2 records would be loaded \(3 rows read, 0 duplicates collapsed, 1 record with defects left out\)\. Job /m,
    );
    assert.match(dry.stderr, /^ {2}line 3, id: /m);
    const link = /^Rejected rows \(CSV with their original text, link valid 1 hour\): (\S+)$/m.exec(
      dry.stderr,
    )?.[1];
    assert.ok(link !== undefined, dry.stderr);
    assert.match(
      await (await fetch(link)).text(),
      /^line,property,message,originalText\r\n3,id,.*,"x,Bob"\r\n$/,
    );
    assert.equal((await h.api<{ recordCount: number }>('GET', `/datasets/${id}`)).json.recordCount, 0);

    const tooMany = await dx('upload', id, file, '--max-bad-records', '0', '--resumable', '--json');
    assert.equal(tooMany.code, 1);
    const job = JSON.parse(tooMany.stdout);
    assert.equal(job.currentStatus.status, 'Failed');
    assert.equal(job.uploadType, 'resumable');
    assert.match(tooMany.stderr, /^Failed: .*\n {2}line 3, id: .*\nRejected rows [^\n]*: http/m);

    const loaded = await dx('upload', id, file, '--max-bad-records', '1', '--resumable');
    assert.equal(loaded.code, 0, loaded.stderr);
    assert.match(
      loaded.stdout,
      /^Completed: 2 records loaded \(3 rows read, 0 duplicates collapsed, 1 record with defects left out\)/m,
    );
    assert.match(loaded.stderr, /^Rejected rows [^\n]*: http/m);

    for (const [flag, value] of [
      ['--max-bad-records', '-1'],
      ['--max-bad-records', '1.5'],
      ['--max-bad-records', '1000000001'],
      ['--mode', 'merge'],
      ['--timeout', 'soon'],
      ['--url', 'localhost:8080'],
    ] as const) {
      const refused = await dx('upload', id, file, flag, value);
      assert.equal(refused.code, 1, `${flag} ${value}`);
      assert.match(refused.stderr, new RegExp(`dx: ${flag} must be`), refused.stderr);
    }
  });

  it('names a service fetch will not call (test/cli/cli.test.ts: one that is not running)', async () => {
    const file = join(h.config.dataDir, 'x.csv');
    writeFileSync(file, 'id\n1\n');
    // Port 1 is on fetch's list of ports it never calls: the refusal has no system error code.
    const res = await run(process.execPath, [BIN, 'upload', 'x', file, '--url', 'http://127.0.0.1:1'], {
      env: { ...process.env, DX_ACCESS_TOKEN: 't' },
    }).catch((err: { code: number; stderr: string }) => err);
    assert.equal((res as { code: number }).code, 1);
    assert.equal(
      (res as { stderr: string }).stderr,
      'dx: cannot reach the service at http://127.0.0.1:1: bad port\n',
    );
  });

  it('needs a token', async () => {
    const res = await run(process.execPath, [BIN, 'upload', 'x', 'y.csv'], {
      env: { ...process.env, DX_ACCESS_TOKEN: '' },
    }).catch((err: { code: number; stderr: string }) => err);
    assert.equal((res as { code: number }).code, 1);
    assert.match((res as { stderr: string }).stderr, /access token/);
  });
});
