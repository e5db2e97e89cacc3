// A records:load URL is a credential (a presigned query, user:password@). On both engines: the job
// row holds it only sealed while the job may run, and once the job ended (Completed or Failed)
// nothing in the database holds its query values or its password; the job view, its status
// entries and the service's log lines (at trace level) never show them.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { createLogger } from '../../src/lib/logger.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';

const SIGNATURE = 'c1gnatureV4lue0123456789abcdef';
const PASSWORD = 'pa55w0rdSecr3t';
const TOKEN = 'tok3nInTheQuery';

await forEachDatabase('records:load source URLs', (target) => {
  let h: Fixture;
  let files: Server;
  let port = 0;
  let log = '';
  before(async () => {
    files = createServer((req, res) => {
      if ((req.url ?? '').startsWith('/missing')) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end('id,name\n1,a\n2,b\n');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    port = (files.address() as AddressInfo).port;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        log += chunk.toString('utf8');
        done();
      },
    });
    h = await startFixture(
      target,
      { LOAD_URL_ALLOWLIST: '127.0.0.1/32' },
      { logger: createLogger('trace', sink) },
    );
  });
  after(async () => {
    await h.close();
    await new Promise((resolve) => files.close(resolve));
  });

  const secretUrl = (path: string) =>
    `http://user:${PASSWORD}@127.0.0.1:${port}${path}?X-Amz-Signature=${SIGNATURE}&token=${TOKEN}&flag#frag`;
  const assertNoSecret = (text: string, where: string) => {
    for (const secret of [SIGNATURE, PASSWORD, TOKEN]) {
      assert.ok(!text.includes(secret), `${where} shows ${secret}: ${text.slice(0, 2000)}`);
    }
  };
  /** Every text cell of the job's rows, in every table that refers to jobs. */
  const storedText = async (jobId: string) => {
    const db = h.database.db;
    const job = await db.selectFrom('dataset_jobs').selectAll().where('id', '=', jobId).execute();
    const logs = await db.selectFrom('dataset_job_logs').selectAll().where('job_id', '=', jobId).execute();
    const errors = await db
      .selectFrom('dataset_job_errors')
      .selectAll()
      .where('job_id', '=', jobId)
      .execute();
    return JSON.stringify([job, logs, errors]);
  };

  for (const [path, ending] of [
    ['/records.csv', 'Completed'],
    ['/missing.csv', 'Failed'],
  ] as const) {
    void it(`a job that ends ${ending} keeps no query value or password`, async () => {
      const id = await h.defineDataset(
        [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'string' },
        ],
        ['id'],
      );
      const url = secretUrl(path);
      const res = await h.api<{ jobId: string; url: string }>('POST', `/datasets/${id}/records:load`, {
        url,
      });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.json.url, url, 'the answer echoes the caller its own URL');
      const jobId = res.json.jobId;
      // While the job may run, the row holds the URL sealed, never in the clear.
      const queued = await h.database.db
        .selectFrom('dataset_jobs')
        .select(['source_url', 'source_shown'])
        .where('id', '=', jobId)
        .executeTakeFirstOrThrow();
      if (queued.source_url !== null) assert.match(queued.source_url, /^v1:[\w-]+$/);
      assertNoSecret(await storedText(jobId), 'the queued job row');

      const job = await h.waitForJob(jobId);
      assert.equal(job.currentStatus.status, ending, JSON.stringify(job.currentStatus));
      const ended = await h.database.db
        .selectFrom('dataset_jobs')
        .select(['source_url', 'source_shown'])
        .where('id', '=', jobId)
        .executeTakeFirstOrThrow();
      assert.equal(ended.source_url, null, 'the ended job keeps no URL to fetch');
      assert.equal(ended.source_shown, `http://127.0.0.1:${port}${path}?X-Amz-Signature&token&flag`);
      assertNoSecret(await storedText(jobId), 'the ended job rows');
      // Nowhere else either: no other text column of the jobs' tables holds the URL's query.
      const like = `%${SIGNATURE}%`;
      const anywhere = await sql<{ n: number | string }>`select count(*) as n from dataset_jobs
        where source_url like ${like} or source_shown like ${like}`.execute(h.database.db);
      assert.equal(Number(anywhere.rows[0]?.n), 0);

      for (const path of [
        `/datasets/jobs/${jobId}`,
        `/datasets/jobs/${jobId}/logs`,
        `/datasets/${id}/jobs`,
      ]) {
        const view = await h.api('GET', path);
        assert.equal(view.status, 200, view.text);
        assertNoSecret(view.text, `GET ${path}`);
      }
      assertNoSecret(log, 'the trace-level log');

      // An idempotent request's kept answer echoes the URL: it is stored sealed, replayed whole.
      const send = () =>
        fetch(`${h.baseUrl}/api/v1/datasets/${id}/records:load?mode=replace`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${h.token}`,
            'content-type': 'application/json',
            'idempotency-key': `k-${ending}`,
          },
          body: JSON.stringify({ url }),
        });
      const first = await send();
      assert.equal(first.status, 202);
      const firstBody = await first.text();
      const replay = await send();
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(await replay.text(), firstBody);
      const kept = await h.database.db.selectFrom('idempotency_keys').selectAll().execute();
      assert.ok(kept.length > 0);
      assertNoSecret(JSON.stringify(kept), 'the kept idempotent answers');
      await h.waitForJob((JSON.parse(firstBody) as { jobId: string }).jobId);
      assert.ok(log.length > 0, 'the log was captured');
    });
  }
});
