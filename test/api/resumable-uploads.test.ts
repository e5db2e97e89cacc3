// Resumable upload sessions (uploadUrl?type=resumable) as partners' upload scripts drive them, with
// Google Cloud Storage's semantics: slices with Content-Range, 308 + Range until the last, status
// queries, out-of-order and repeated slices, a restart between slices, expiry; and single-request
// URLs that refuse a partial Content-Range. On both engines and both object stores.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { forEachDatabase } from '../support/databases.js';
import { eventually } from '../support/poll.js';
import { allRecords, requestUpload } from '../support/loading.js';
import { startFixture, startFixtureOnS3, type Fixture, type JobBody } from '../support/fixture.js';
import { expireUploads } from '../../src/domain/jobs/uploads.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];

/** A CSV of `n` records, as bytes. */
function csv(n: number): Buffer {
  let text = 'id,name\n';
  for (let i = 1; i <= n; i++) text += `${i},name-${i}\n`;
  return Buffer.from(text);
}

interface SliceReply {
  status: number;
  range: string | null;
  text: string;
}

/**
 * Sends a slice's head and a first chunk of a chunked body, never its end, over a socket of its
 * own; resolves with the answer's head and whether the service then closed the connection.
 */
function answerToUnfinishedChunkedSlice(
  url: string,
  contentRange: string,
): Promise<{ head: string; closedByServer: boolean }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ head: received, closedByServer: false });
    }, 10_000);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ head: received.split('\r\n\r\n')[0] ?? '', closedByServer: true });
    });
    const chunk = 'x'.repeat(1000);
    socket.write(
      `PUT ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n` +
        `content-type: text/csv\r\ncontent-range: ${contentRange}\r\ntransfer-encoding: chunked\r\n\r\n` +
        `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
    );
  });
}

await forEachDatabase('resumable uploads', (target) => {
  for (const storage of ['local', 's3'] as const) {
    void describe(`${storage} storage`, () => {
      let h: Fixture;
      before(async () => {
        const env = { UPLOAD_MAX_BYTES: '2000000' };
        h = storage === 's3' ? await startFixtureOnS3(target, env) : await startFixture(target, env);
      });
      after(() => h.close());

      const open = async (id: string, contentType: 'csv' | 'json' = 'csv') => {
        const session = await requestUpload(h, id, { mode: 'replace', type: 'resumable', contentType });
        // Whatever the store, the session is the service's own URL, as partners' code expects.
        assert.equal(new URL(session.url).origin, h.baseUrl);
        return session;
      };
      // As partners' scripts send them: their bearer token still attached, Content-Type on each.
      const send = async (
        url: string,
        headers: Record<string, string>,
        body?: Buffer,
      ): Promise<SliceReply> => {
        const res = await fetch(url, {
          method: 'PUT',
          redirect: 'manual',
          headers: { authorization: `Bearer ${h.token}`, ...headers },
          ...(body !== undefined ? { body } : {}),
        });
        return { status: res.status, range: res.headers.get('range'), text: await res.text() };
      };
      const slice = (
        url: string,
        file: Buffer,
        start: number,
        end: number,
        total: number | '*' = file.length,
      ) =>
        send(
          url,
          { 'content-type': 'text/csv', 'content-range': `bytes ${start}-${end}/${total}` },
          file.subarray(start, end + 1),
        );
      const query = (url: string, total: number | '*' = '*') =>
        send(url, { 'content-range': `bytes */${total}` });
      const completed = async (jobId: string): Promise<JobBody> => {
        const job = await h.waitForJob(jobId);
        assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
        return job;
      };
      const status = async (jobId: string) =>
        (await h.api<JobBody & { uploadType: string }>('GET', `/datasets/jobs/${jobId}`)).json;

      void it('takes a file in slices: 308 with Range for each, 200 for the last, then loads it', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(3000);
        const up = await open(id);
        assert.equal((await status(up.jobId)).uploadType, 'resumable');
        const first = await query(up.url);
        assert.equal(first.status, 308);
        assert.equal(first.range, null, 'nothing persisted yet');
        const size = 16 * 1024;
        let start = 0;
        for (; start + size < file.length; start += size) {
          const r = await slice(up.url, file, start, start + size - 1);
          assert.equal(r.status, 308, r.text);
          assert.equal(r.range, `bytes=0-${start + size - 1}`);
          assert.equal((await status(up.jobId)).currentStatus.status, 'Created');
        }
        const last = await slice(up.url, file, start, file.length - 1);
        assert.equal(last.status, 200, last.text);
        assert.deepEqual(JSON.parse(last.text), { datasetId: id, jobId: up.jobId, bytes: file.length });
        const job = await completed(up.jobId);
        assert.equal(job.currentStatus.logData?.rowsLoaded, 3000);
        const records = await allRecords(h, id);
        assert.equal(records.length, 3000);
        assert.deepEqual(records[2999], { id: 3000, name: 'name-3000' });
        // Asking again once complete answers 200; the worker deletes the slices once the job ended.
        assert.equal((await query(up.url, file.length)).status, 200);
        const slices = `datasets/${id}/uploads/${up.jobId}.slices/`;
        assert.ok(
          await eventually(async () => (await h.services.objects.list(slices)).length === 0, 10_000),
          'the slices are deleted',
        );
      });

      void it('answers a gap or a repeat with the true Range and stores no byte twice', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(500);
        const up = await open(id);
        assert.equal((await slice(up.url, file, 0, 999)).range, 'bytes=0-999');
        // A slice past the persisted prefix is not stored.
        const gap = await slice(up.url, file, 2000, 2999);
        assert.equal(gap.status, 308);
        assert.equal(gap.range, 'bytes=0-999');
        // A repeat of persisted bytes changes nothing; an overlapping retry adds only the new bytes.
        assert.equal((await slice(up.url, file, 0, 999)).range, 'bytes=0-999');
        assert.equal((await slice(up.url, file, 500, 1999)).range, 'bytes=0-1999');
        const q = await query(up.url, file.length);
        assert.equal(q.status, 308);
        assert.equal(q.range, 'bytes=0-1999');
        assert.equal((await slice(up.url, file, 2000, file.length - 1)).status, 200);
        const job = await completed(up.jobId);
        assert.equal(job.currentStatus.logData?.rowsRead, 500, 'no line read twice');
        assert.equal((await allRecords(h, id)).length, 500);
      });

      void it('keeps one keep-alive connection usable after slices it answers without storing', async () => {
        // The sequence of issue 34: a slice repeating persisted bytes and one past them are answered
        // 308 before their body is read; the next slice on the same connection must still be served.
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(80_000);
        assert.ok(file.length >= 1_300_000);
        const up = await open(id);
        const agent = new Agent({ connections: 1, pipelining: 1 });
        try {
          const put = async (start: number, end: number) => {
            const res = await undiciRequest(up.url, {
              method: 'PUT',
              dispatcher: agent,
              headers: { 'content-type': 'text/csv', 'content-range': `bytes ${start}-${end}/*` },
              body: file.subarray(start, end + 1),
            });
            const text = await res.body.text();
            return { status: res.statusCode, range: res.headers.range, text };
          };
          let connects = 0;
          agent.on('connect', () => connects++);
          assert.equal((await put(0, 299_999)).range, 'bytes=0-299999');
          const repeat = await put(0, 299_999);
          assert.equal(repeat.status, 308);
          assert.equal(repeat.range, 'bytes=0-299999');
          const gap = await put(300_010, 300_020);
          assert.equal(gap.status, 308);
          assert.equal(gap.range, 'bytes=0-299999');
          const next = await put(300_000, 1_299_999);
          assert.equal(next.status, 308, next.text);
          assert.equal(next.range, 'bytes=0-1299999');
          // The unread bodies were read to their end: the connection was kept, not closed.
          assert.equal(connects, 1, 'one connection for every slice');
          // A body of unknown length (chunked) still being sent is not read to be thrown away: the
          // answer says the connection closes, and it does.
          const open = await answerToUnfinishedChunkedSlice(up.url, 'bytes 1400000-1400999/*');
          assert.match(open.head, /^HTTP\/1\.1 308/);
          assert.match(open.head, /\r\nconnection: close\r\n/i);
          assert.ok(open.closedByServer, 'the service closed the connection');
          const last = await put(1_300_000, file.length - 1);
          assert.equal(last.status, 308);
          const done = await send(up.url, { 'content-range': `bytes */${file.length}` });
          assert.equal(done.status, 200, done.text);
          const job = await completed(up.jobId);
          assert.equal(job.currentStatus.logData?.rowsLoaded, 80_000);

          // A refusal before the body is read (a single-request URL used already: 409), bodies of
          // several sizes: the next request on the connection is still served at once.
          const single = await requestUpload(h, id, { mode: 'replace' });
          const once = await undiciRequest(single.url, {
            method: 'PUT',
            dispatcher: agent,
            headers: { 'content-type': 'text/csv' },
            body: csv(3),
          });
          assert.equal(once.statusCode, 200, await once.body.text());
          for (const size of [10, 20_000, 40_000, 1_000_000]) {
            const refused = await undiciRequest(single.url, {
              method: 'PUT',
              dispatcher: agent,
              headers: { 'content-type': 'text/csv' },
              body: file.subarray(0, size),
            });
            await refused.body.text();
            assert.equal(refused.statusCode, 409);
            const where = await undiciRequest(up.url, {
              method: 'PUT',
              dispatcher: agent,
              headers: { 'content-range': `bytes */${file.length}` },
              headersTimeout: 5000,
            });
            await where.body.text();
            assert.equal(where.statusCode, 200, `after a refused body of ${size} bytes`);
          }
        } finally {
          await agent.close();
        }
      });

      void it('survives a restart of the service between slices', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(800);
        const up = await open(id);
        assert.equal((await slice(up.url, file, 0, 4095)).status, 308);
        await h.restart();
        const where = await query(up.url);
        assert.equal(where.status, 308);
        assert.equal(where.range, 'bytes=0-4095');
        assert.equal((await slice(up.url, file, 4096, file.length - 1)).status, 200);
        await completed(up.jobId);
        assert.equal((await allRecords(h, id)).length, 800);
      });

      void it('takes slices of unknown total, ended by a status query naming it', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(200);
        const up = await open(id);
        assert.equal((await slice(up.url, file, 0, 1023, '*')).range, 'bytes=0-1023');
        assert.equal((await slice(up.url, file, 1024, file.length - 1, '*')).status, 308);
        assert.equal((await query(up.url, file.length)).status, 200);
        await completed(up.jobId);
        assert.equal((await allRecords(h, id)).length, 200);
      });

      void it('refuses slices that contradict their Content-Range, keeping what was persisted', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(100);
        const up = await open(id);
        assert.equal((await slice(up.url, file, 0, 99)).status, 308);
        // The range promises more bytes than the body has.
        const short = await send(
          up.url,
          { 'content-type': 'text/csv', 'content-range': `bytes 100-399/${file.length}` },
          file.subarray(100, 200),
        );
        assert.equal(short.status, 400);
        assert.ok('Content-Range' in (JSON.parse(short.text) as { errors: object }).errors);
        // Another total than the one declared before; a malformed header.
        assert.equal((await slice(up.url, file, 100, 199, file.length + 1)).status, 400);
        assert.equal((await send(up.url, { 'content-range': 'bytes=0-10' }, Buffer.from('x'))).status, 400);
        assert.equal((await query(up.url)).range, 'bytes=0-99');
        assert.equal((await slice(up.url, file, 100, file.length - 1)).status, 200);
        await completed(up.jobId);
      });

      void it('expires an abandoned session: its job ends Expired and its slices are deleted', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(100);
        const up = await open(id);
        assert.equal((await slice(up.url, file, 0, 99)).status, 308);
        const prefix = `datasets/${id}/uploads/${up.jobId}.slices/`;
        assert.equal((await h.services.objects.list(prefix)).length, 1);
        const deps = { db: h.database.db, objects: h.services.objects, records: null as never };
        // In progress when the URL's hour ends: it may go on (each slice keeps it open an hour).
        assert.equal(await expireUploads(deps, Date.now() + 30 * 60_000), 0);
        assert.ok((await expireUploads(deps, Date.now() + 25 * 3600_000)) >= 1);
        assert.equal((await status(up.jobId)).currentStatus.status, 'Expired');
        assert.deepEqual(await h.services.objects.list(prefix), []);
        const late = await slice(up.url, file, 100, file.length - 1);
        assert.equal(late.status, 410);
      });

      void it('reads the file as the PUT’s Content-Type says, and records it on the job', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        // Asked for as CSV, sent as JSON: the client's code does exactly that.
        const single = await requestUpload(h, id);
        const json = Buffer.from(
          JSON.stringify([
            { id: 1, name: 'ann' },
            { id: 2, name: 'bob' },
          ]),
        );
        const put = await send(single.url, { 'content-type': 'application/json' }, json);
        assert.equal(put.status, 200, put.text);
        const job = await completed(single.jobId);
        assert.equal(job.contentType, 'json');
        // TSV in a resumable session; octet-stream leaves the declared format.
        const up = await open(id, 'csv');
        const tsv = Buffer.from('id\tname\n3\tcy\n');
        const r = await send(
          up.url,
          {
            'content-type': 'text/tab-separated-values',
            'content-range': `bytes 0-${tsv.length - 1}/${tsv.length}`,
          },
          tsv,
        );
        assert.equal(r.status, 200, r.text);
        const tsvJob = await completed(up.jobId);
        assert.equal(tsvJob.contentType, 'tsv');
        assert.deepEqual(await allRecords(h, id), [{ id: 3, name: 'cy' }]);
      });

      void it('refuses a partial Content-Range on a single-request URL and stores nothing', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const file = csv(50);
        const res = await requestUpload(h, id);
        const part = await slice(res.url, file, 0, 99);
        assert.equal(part.status, 400);
        const problem = JSON.parse(part.text) as { errors: Record<string, string[]>; detail: string };
        assert.ok('Content-Range' in problem.errors, part.text);
        assert.match(problem.detail, /type=resumable/);
        assert.equal((await status(res.jobId)).currentStatus.status, 'Created');
        assert.equal(await h.services.objects.head(`datasets/${id}/uploads/${res.jobId}`), null);
        // The whole file with a Content-Range that says so is taken.
        const whole = await slice(res.url, file, 0, file.length - 1);
        assert.equal(whole.status, 200, whole.text);
        await completed(res.jobId);
        assert.equal((await allRecords(h, id)).length, 50);
      });

      void it('serves records:retrieve links to a client that attaches its bearer token', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const res = await requestUpload(h, id);
        assert.equal((await send(res.url, { 'content-type': 'text/csv' }, csv(3))).status, 200);
        await h.waitForJob(res.jobId);
        const link = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
          contentType: 'csv',
        });
        const download = await fetch(link.json.url, {
          headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
        });
        assert.equal(download.status, 200);
        assert.equal(await download.text(), 'id,name\r\n1,name-1\r\n2,name-2\r\n3,name-3\r\n');
      });
    });
  }
});
