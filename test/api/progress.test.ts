// Live progress of load jobs: while a job runs, its view and its current status entry show the bytes
// and records read so far; once it ended, the final figures stay.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type JobBody } from '../support/fixture.js';
import { putFile, requestUpload, uploadAndWait } from '../support/loading.js';

interface Progress {
  bytesRead: number;
  bytesTotal: number | null;
  rowsRead: number;
  updatedAt: string;
}
type LiveLog = { message: string; rowsRead?: number; bytesRead?: number; bytesTotal?: number | null } | null;
type JobWithProgress = Omit<JobBody, 'currentStatus'> & {
  currentStatus: Omit<JobBody['currentStatus'], 'logData'> & { logData: LiveLog };
  progress: Progress | null;
};

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
const HEADER = 'id,name\n';
const rowsFrom = (first: number, count: number) =>
  Array.from({ length: count }, (_, i) => `${first + i},name number ${first + i}\n`).join('');

await forEachDatabase('load progress', (target) => {
  let h: Fixture;
  let files: Server;
  let filesUrl = '';
  // The slow file: its parts are sent one at a time, each when the test releases it.
  const parts = [HEADER + rowsFrom(1, 4000), rowsFrom(4001, 4000), rowsFrom(8001, 4000)];
  const file = parts.join('');
  let held: { res: ServerResponse; sent: number } | null = null;

  before(async () => {
    h = await startFixture(target, { LOAD_URL_ALLOWLIST: '127.0.0.1/32' });
    files = createServer((req, res) => {
      if (req.url !== '/slow.csv') {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(Buffer.byteLength(file)) });
      res.write(parts[0]);
      held = { res, sent: 1 };
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    files.closeAllConnections();
    await new Promise((resolve) => files.close(resolve));
    await h.close();
  });

  const job = async (jobId: string) => {
    const res = await h.api<JobWithProgress>('GET', `/datasets/jobs/${jobId}`);
    assert.equal(res.status, 200, res.text);
    return res.json;
  };

  /** Polls the job until `done` holds of it (the worker stores figures about every second). */
  const waitFor = async (jobId: string, done: (j: JobWithProgress) => boolean, what: string) => {
    const until = Date.now() + 20_000;
    for (;;) {
      const j = await job(jobId);
      if (done(j)) return j;
      if (Date.now() > until) throw new Error(`${what}: ${JSON.stringify(j)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  void it('shows bytes and records read growing while a records:load runs, then the final figures', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const start = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load`, {
      url: `${filesUrl}/slow.csv`,
    });
    assert.equal(start.status, 202, start.text);
    const jobId = start.json.jobId;
    const total = Buffer.byteLength(file);

    const seen: Progress[] = [];
    for (let part = 1; part <= parts.length; part++) {
      const sentBytes = Buffer.byteLength(parts.slice(0, part).join(''));
      // The parser may hold back the last record until it sees what follows it.
      const sentRows = 4000 * part - 1;
      const j = await waitFor(
        jobId,
        (j) => j.progress !== null && j.progress.bytesRead === sentBytes && j.progress.rowsRead >= sentRows,
        `bytesRead should reach ${sentBytes} and rowsRead ${sentRows}`,
      );
      seen.push(j.progress!);
      if (part < parts.length) {
        assert.equal(j.currentStatus.status, 'Running');
        assert.equal(j.progress!.bytesTotal, total, 'the Content-Length is the total');
        // The Running entry carries the same live figures, in the job view and in logs:current.
        const log = j.currentStatus.logData;
        assert.equal(log?.bytesTotal, total);
        assert.ok((log?.bytesRead ?? 0) >= seen[0]!.bytesRead);
        const current = await h.api<{ status: string; logData: LiveLog }>(
          'GET',
          `/datasets/jobs/${jobId}/logs:current`,
        );
        assert.equal(current.status, 200, current.text);
        assert.equal(current.json.status, 'Running');
        assert.equal(current.json.logData?.bytesRead, sentBytes);
        assert.equal(current.json.logData?.bytesTotal, total);
        assert.ok((current.json.logData?.rowsRead ?? 0) > 0, JSON.stringify(current.json));
        assert.match(current.json.logData?.message ?? '', /Loading records/);
        // Release the next part.
        held!.res.write(parts[part]);
        if (part + 1 === parts.length) held!.res.end();
      }
    }
    // Nothing is counted ahead of the bytes that came: the figures moved with each part.
    assert.ok(seen[0]!.rowsRead <= 4000 && seen[1]!.rowsRead <= 8000, JSON.stringify(seen));
    assert.ok(seen[0]!.updatedAt < seen[1]!.updatedAt && seen[1]!.updatedAt <= seen[2]!.updatedAt);

    const ended = (await h.waitForJob(jobId)) as JobWithProgress;
    assert.equal(ended.currentStatus.status, 'Completed', JSON.stringify(ended.currentStatus));
    assert.deepEqual(
      { ...ended.progress, updatedAt: undefined },
      { bytesRead: total, bytesTotal: total, rowsRead: 12000, updatedAt: undefined },
    );
    assert.equal(ended.currentStatus.logData?.rowsRead, 12000);
    // Progress is not a status entry: the stored entries are as they were written.
    const logs = await h.api<{ data: { status: string; logData: LiveLog }[] }>(
      'GET',
      `/datasets/jobs/${jobId}/logs`,
    );
    assert.deepEqual(
      logs.json.data.map((e) => e.status),
      ['Queued', 'Running', 'Completed'],
    );
    for (const entry of logs.json.data) assert.equal(entry.logData?.bytesRead, undefined);
  });

  void it('counts an upload as stored (gzip before unpacking) with its size as the total', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const waiting = await requestUpload(h, id);
    assert.equal((await job(waiting.jobId)).progress, null, 'no progress before a worker runs the job');

    const plain = HEADER + rowsFrom(1, 500);
    const done = (await uploadAndWait(h, id, plain, { mode: 'replace' })) as JobWithProgress;
    assert.equal(done.currentStatus.status, 'Completed');
    const size = Buffer.byteLength(plain);
    assert.deepEqual(
      { ...done.progress, updatedAt: undefined },
      { bytesRead: size, bytesTotal: size, rowsRead: 500, updatedAt: undefined },
    );
    assert.match(done.progress?.updatedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);

    const packed = gzipSync(HEADER + rowsFrom(1, 3000));
    const gz = (await uploadAndWait(h, id, packed, { mode: 'replace' })) as JobWithProgress;
    assert.equal(gz.currentStatus.status, 'Completed');
    assert.deepEqual(
      {
        bytesRead: gz.progress?.bytesRead,
        bytesTotal: gz.progress?.bytesTotal,
        rowsRead: gz.progress?.rowsRead,
      },
      { bytesRead: packed.length, bytesTotal: packed.length, rowsRead: 3000 },
    );
  });

  void it('never shows an unknown total for a stored upload, even before its file is open', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const plain = HEADER + rowsFrom(1, 50);
    // The worker's read of the stored file waits until the test lets it go.
    const objects = h.services.objects;
    const get = objects.get.bind(objects);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    objects.get = async (key) => {
      await gate;
      return get(key);
    };
    try {
      const upload = await requestUpload(h, id);
      assert.equal((await putFile(upload.url, plain)).status, 200);
      await waitFor(upload.jobId, (j) => j.currentStatus.status === 'Running', 'the job should run');
      // Opening: no figures yet rather than bytesTotal null (a worker stores them at once once open).
      for (let i = 0; i < 10; i++) {
        const j = await job(upload.jobId);
        assert.equal(j.progress, null, JSON.stringify(j.progress));
        assert.equal(j.currentStatus.logData?.bytesTotal, undefined);
        await new Promise((r) => setTimeout(r, 50));
      }
      release();
      const done = await h.waitForJob(upload.jobId);
      assert.equal((done as JobWithProgress).progress?.bytesTotal, Buffer.byteLength(plain));
    } finally {
      release();
      objects.get = get;
    }
  });

  void it('a stored upload shows its total from the first figures on', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const plain = HEADER + rowsFrom(1, 20000);
    const upload = await requestUpload(h, id);
    assert.equal((await putFile(upload.url, plain)).status, 200);
    const seen: (Progress | null)[] = [];
    for (;;) {
      const j = await job(upload.jobId);
      seen.push(j.progress);
      if (j.currentStatus.status === 'Completed' || j.currentStatus.status === 'Failed') break;
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const p of seen)
      if (p !== null) assert.equal(p.bytesTotal, Buffer.byteLength(plain), JSON.stringify(p));
    assert.notEqual(seen.at(-1), null);
  });

  void it('keeps the figures of a failed load where it stopped', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const bad = `${HEADER}${rowsFrom(1, 100)}x,bad\n${rowsFrom(102, 99)}`;
    const failed = (await uploadAndWait(h, id, bad)) as JobWithProgress;
    assert.equal(failed.currentStatus.status, 'Failed');
    assert.equal(failed.progress?.rowsRead, 200);
    assert.equal(failed.progress?.bytesRead, Buffer.byteLength(bad));
  });

  void it('shows a records:load of unknown length with no total', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const chunked = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' }); // no Content-Length: chunked
      res.write(HEADER);
      res.end(rowsFrom(1, 10));
    });
    await new Promise<void>((resolve) => chunked.listen(0, '127.0.0.1', resolve));
    try {
      const port = (chunked.address() as AddressInfo).port;
      const start = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load`, {
        url: `http://127.0.0.1:${port}/rows.csv`,
      });
      assert.equal(start.status, 202, start.text);
      const ended = (await h.waitForJob(start.json.jobId)) as JobWithProgress;
      assert.equal(ended.currentStatus.status, 'Completed');
      assert.equal(ended.progress?.bytesTotal, null);
      assert.equal(ended.progress?.bytesRead, Buffer.byteLength(HEADER + rowsFrom(1, 10)));
      assert.equal(ended.progress?.rowsRead, 10);
    } finally {
      await new Promise((resolve) => chunked.close(resolve));
    }
  });
});
