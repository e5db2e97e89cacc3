// Idempotent requests: the Idempotency-Key header on POST /datasets, uploadUrl and records:load,
// over real HTTP on both engines.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type Json } from '../support/fixture.js';
import {
  deleteExpiredIdempotencyKeys,
  IDEMPOTENCY_WINDOW_MS,
} from '../../src/domain/idempotency/idempotency-keys.js';
import { sweep } from '../../src/worker/sweep.js';

interface Answer {
  status: number;
  json: Json;
  text: string;
  replayed: string | null;
  retryAfter: string | null;
  contentType: string;
}

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
/** A records:load source; no worker runs here, and one would refuse it (a private address). */
const SOURCE = 'http://127.0.0.1:9/file.csv';

const BIN = join(process.cwd(), 'bin', 'dx.js');

/** A second `dx serve --role api` process on the fixture's database; resolves with its origin. */
async function startApiProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'serve', '--role', 'api', '--api-port', '0'], {
    env: { ...process.env, ...env, HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_DELAY_MS: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let banner = '';
  child.stderr.setEncoding('utf8');
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no API process: ${banner}`)), 60_000);
    child.stderr.on('data', (chunk: string) => {
      banner += chunk;
      const match = /API listening on (http:\/\/[^/\s]+)\/api\/v1/.exec(banner);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    // 'close', not 'exit': by then everything it wrote has been read, so a failure shows why.
    child.once('close', (code, signal) =>
      reject(new Error(`API process ended (${code ?? signal}) before listening: ${banner}`)),
    );
  });
  return {
    origin,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

let keyCounter = 0;
/** A key no other test uses. */
const newKey = () => `key-${process.pid}-${Date.now()}-${keyCounter++}`;

await forEachDatabase('idempotent requests', (target) => {
  let h: Fixture;
  before(async () => {
    // The API alone: no worker's housekeeping deletes keys while a test looks at them.
    h = await startFixture(target, { ROLES: 'api' });
  });
  after(() => h.close());

  /** POST with an optional Idempotency-Key, as a partner's client sends it. */
  const post = async (
    path: string,
    body: unknown,
    key?: string,
    token: string = h.token,
    origin: string = h.baseUrl,
  ): Promise<Answer> => {
    const res = await fetch(`${origin}/api/v1${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(key !== undefined ? { 'idempotency-key': key } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json = {};
    try {
      json = JSON.parse(text) as Json;
    } catch {
      // not JSON: the assertions on `text` say what came
    }
    return {
      status: res.status,
      json,
      text,
      replayed: res.headers.get('idempotent-replayed'),
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type') ?? '',
    };
  };

  const datasetBody = (name: string) => ({ name, schema: { properties: PROPS, primaryKey: ['id'] } });
  const datasetCount = async (token = h.token) => {
    const res = await fetch(`${h.baseUrl}/api/v1/datasets`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return ((await res.json()) as { metadata: { count: number } }).metadata.count;
  };
  const jobIds = async (datasetId: string) => {
    const res = await h.api<{ data: { datasetJobId: string }[] }>('GET', `/datasets/${datasetId}/jobs`);
    assert.equal(res.status, 200, res.text);
    return res.json.data.map((j) => j.datasetJobId);
  };
  const keyRow = (key: string) =>
    h.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirst();

  void it('replays the first answer to POST /datasets and creates no second dataset', async () => {
    const key = newKey();
    const before = await datasetCount();
    const first = await post('/datasets', datasetBody('replayed'), key);
    assert.equal(first.status, 201, first.text);
    assert.equal(first.replayed, null);
    const again = await post('/datasets', datasetBody('replayed'), key);
    assert.equal(again.status, 201);
    assert.equal(again.replayed, 'true');
    assert.equal(again.text, first.text);
    assert.match(again.contentType, /^application\/json/);
    assert.equal(await datasetCount(), before + 1);
  });

  void it('replays uploadUrl and records:load answers with the same job', async () => {
    const datasetId = await h.defineDataset(PROPS, ['id']);
    const uploadKey = newKey();
    const upload = await post(
      `/datasets/${datasetId}/uploadUrl?type=resumable`,
      { contentType: 'csv' },
      uploadKey,
    );
    assert.equal(upload.status, 202, upload.text);
    const uploadAgain = await post(
      `/datasets/${datasetId}/uploadUrl?type=resumable`,
      { contentType: 'csv' },
      uploadKey,
    );
    assert.equal(uploadAgain.status, 202);
    assert.equal(uploadAgain.replayed, 'true');
    assert.equal(uploadAgain.text, upload.text);

    const loadKey = newKey();
    const load = await post(`/datasets/${datasetId}/records:load?mode=replace`, { url: SOURCE }, loadKey);
    assert.equal(load.status, 202, load.text);
    const loadAgain = await post(
      `/datasets/${datasetId}/records:load?mode=replace`,
      { url: SOURCE },
      loadKey,
    );
    assert.equal(loadAgain.status, 202);
    assert.equal(loadAgain.replayed, 'true');
    assert.equal(loadAgain.json.jobId, load.json.jobId);
    assert.deepEqual((await jobIds(datasetId)).sort(), [upload.json.jobId, load.json.jobId].sort());
  });

  void it('lets one of many concurrent requests with one key run; the others wait (409) or replay', async () => {
    const datasetId = await h.defineDataset(PROPS, ['id']);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        post(`/datasets/${datasetId}/records:load?mode=replace`, { url: SOURCE }, key),
      ),
    );
    const accepted = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status !== 202);
    assert.equal(accepted.filter((a) => a.replayed === null).length, 1, 'exactly one request ran');
    assert.equal(new Set(accepted.map((a) => a.json.jobId)).size, 1);
    for (const a of refused) {
      assert.equal(a.status, 409, a.text);
      assert.match(a.contentType, /^application\/problem\+json/);
      assert.equal(a.retryAfter, '1');
    }
    assert.deepEqual(await jobIds(datasetId), [accepted[0]!.json.jobId]);
    // Once it is answered, a retry replays it.
    const retry = await post(`/datasets/${datasetId}/records:load?mode=replace`, { url: SOURCE }, key);
    assert.equal(retry.replayed, 'true');
    assert.equal(retry.json.jobId, accepted[0]!.json.jobId);
  });

  void it('shares keys between API processes on one database', async () => {
    const other = await startApiProcess(h.processEnv);
    try {
      const datasetId = await h.defineDataset(PROPS, ['id']);
      const key = newKey();
      const path = `/datasets/${datasetId}/records:load?mode=replace`;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          post(path, { url: SOURCE }, key, h.token, i % 2 === 0 ? h.baseUrl : other.origin),
        ),
      );
      const accepted = answers.filter((a) => a.status === 202);
      assert.equal(accepted.filter((a) => a.replayed === null).length, 1, 'exactly one request ran');
      for (const a of answers) assert.ok([202, 409].includes(a.status), a.text);
      const jobs = await jobIds(datasetId);
      assert.equal(jobs.length, 1);
      // Each process replays the answer the other may have given.
      for (const origin of [h.baseUrl, other.origin]) {
        const retry = await post(path, { url: SOURCE }, key, h.token, origin);
        assert.equal(retry.replayed, 'true');
        assert.equal(retry.json.jobId, jobs[0]);
      }
    } finally {
      await other.stop();
    }
  });

  void it('lets one of concurrent requests that differ run; the others are 409 or 422', async () => {
    const datasetId = await h.defineDataset(PROPS, ['id']);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(`/datasets/${datasetId}/records:load?mode=replace`, { url: `${SOURCE}?n=${i}` }, key),
      ),
    );
    const ran = answers.filter((a) => a.status === 202);
    assert.equal(ran.length, 1, answers.map((a) => a.status).join(','));
    assert.equal(ran[0]!.replayed, null);
    for (const a of answers.filter((x) => x.status !== 202)) assert.ok([409, 422].includes(a.status), a.text);
    assert.deepEqual(await jobIds(datasetId), [ran[0]!.json.jobId]);
  });

  void it('answers 422 to the same key with another body, query or path, and creates nothing', async () => {
    const datasetId = await h.defineDataset(PROPS, ['id']);
    const key = newKey();
    const first = await post(`/datasets/${datasetId}/records:load?mode=replace`, { url: SOURCE }, key);
    assert.equal(first.status, 202, first.text);

    const otherBody = await post(
      `/datasets/${datasetId}/records:load?mode=replace`,
      { url: `${SOURCE}2` },
      key,
    );
    assert.equal(otherBody.status, 422, otherBody.text);
    assert.match(otherBody.contentType, /^application\/problem\+json/);
    assert.deepEqual(otherBody.json.errors, { 'Idempotency-Key': ['already used for a different request'] });
    assert.equal(otherBody.replayed, null);

    const otherQuery = await post(`/datasets/${datasetId}/records:load?mode=create`, { url: SOURCE }, key);
    assert.equal(otherQuery.status, 422, otherQuery.text);

    const otherDataset = await h.defineDataset(PROPS, ['id']);
    const otherPath = await post(`/datasets/${otherDataset}/records:load?mode=replace`, { url: SOURCE }, key);
    assert.equal(otherPath.status, 422, otherPath.text);

    const before = await datasetCount();
    const otherRoute = await post('/datasets', datasetBody('other route'), key);
    assert.equal(otherRoute.status, 422, otherRoute.text);
    assert.equal(await datasetCount(), before);
    assert.deepEqual(await jobIds(datasetId), [first.json.jobId]);
    assert.deepEqual(await jobIds(otherDataset), []);
  });

  void it('treats a body with its keys in another order or other spacing as the same request', async () => {
    const key = newKey();
    const first = await post('/datasets', datasetBody('same body'), key);
    assert.equal(first.status, 201, first.text);
    const reordered = `{ "schema": {"primaryKey": ["id"], "properties": ${JSON.stringify(PROPS)}},\n "name": "same body" }`;
    const again = await post('/datasets', reordered, key);
    assert.equal(again.status, 201, again.text);
    assert.equal(again.replayed, 'true');
    assert.equal(again.text, first.text);
  });

  void it('keeps keys of each installation apart', async () => {
    const key = newKey();
    const mine = await post('/datasets', datasetBody('mine'), key);
    assert.equal(mine.status, 201, mine.text);
    const otherToken = await h.otherToken();
    const theirs = await post('/datasets', datasetBody('mine'), key, otherToken);
    assert.equal(theirs.status, 201, theirs.text);
    assert.equal(theirs.replayed, null);
    assert.notEqual(theirs.json.datasetId, mine.json.datasetId);
    assert.equal(await datasetCount(otherToken), 1);
    // A different body under the other installation's use of the key is no conflict of ours.
    const mineAgain = await post('/datasets', datasetBody('mine'), key);
    assert.equal(mineAgain.replayed, 'true');
    assert.equal(mineAgain.json.datasetId, mine.json.datasetId);
  });

  void it('answers 400 naming the header to a malformed key, and creates nothing', async () => {
    const before = await datasetCount();
    for (const bad of ['', 'has space', 'tab\tinside', 'x'.repeat(256), 'caf\u00e9']) {
      const res = await post('/datasets', datasetBody('bad key'), bad);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.match(res.contentType, /^application\/problem\+json/);
      assert.match(String(res.json.detail), /Idempotency-Key/);
      assert.ok(Array.isArray((res.json.errors as Record<string, unknown>)['Idempotency-Key']));
    }
    assert.equal(await datasetCount(), before);
    const widest = await post('/datasets', datasetBody('widest key'), `!~${'k'.repeat(253)}`);
    assert.equal(widest.status, 201, widest.text);
  });

  void it('keeps answers of the handler below 500, not refusals before it', async () => {
    // A 404 from the handler is the first answer: it replays.
    const key = newKey();
    const missing = await post('/datasets/no-such-dataset/uploadUrl', { contentType: 'csv' }, key);
    assert.equal(missing.status, 404, missing.text);
    const missingAgain = await post('/datasets/no-such-dataset/uploadUrl', { contentType: 'csv' }, key);
    assert.equal(missingAgain.status, 404);
    assert.equal(missingAgain.replayed, 'true');
    assert.equal(missingAgain.text, missing.text);

    // A body refused by the schema never reached the handler: the key stays free.
    const key2 = newKey();
    const invalid = await post('/datasets', { name: 'no schema' }, key2);
    assert.equal(invalid.status, 400, invalid.text);
    assert.equal(await keyRow(key2), undefined);
    const valid = await post('/datasets', datasetBody('after a 400'), key2);
    assert.equal(valid.status, 201, valid.text);
    assert.equal(valid.replayed, null);

    // Refused credentials never reach it either.
    const key3 = newKey();
    const unauthenticated = await post('/datasets', datasetBody('no token'), key3, 'dxt_not-a-token');
    assert.equal(unauthenticated.status, 401);
    assert.equal(await keyRow(key3), undefined);
  });

  void it('answers 409 while a claim is live, and lets a retry take over a lapsed one', async () => {
    const key = newKey();
    const first = await post('/datasets', datasetBody('lapsed'), key);
    assert.equal(first.status, 201, first.text);
    // As a process that died after claiming the key leaves it: in progress, no answer.
    const unanswered = { response_status: null, response_type: null, response_body: null };
    await h.database.db
      .updateTable('idempotency_keys')
      .set({ ...unanswered, lease_expires_at: Date.now() + 60_000 })
      .where('key', '=', key)
      .execute();
    const busy = await post('/datasets', datasetBody('lapsed'), key);
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.retryAfter, '1');

    await h.database.db
      .updateTable('idempotency_keys')
      .set({ lease_expires_at: Date.now() - 1 })
      .where('key', '=', key)
      .execute();
    const retried = await post('/datasets', datasetBody('lapsed'), key);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.replayed, null);
    const again = await post('/datasets', datasetBody('lapsed'), key);
    assert.equal(again.replayed, 'true');
    assert.equal(again.json.datasetId, retried.json.datasetId);
  });

  void it('remembers keys across a restart', async () => {
    const key = newKey();
    const first = await post('/datasets', datasetBody('before restart'), key);
    assert.equal(first.status, 201, first.text);
    await h.restart();
    const again = await post('/datasets', datasetBody('before restart'), key);
    assert.equal(again.status, 201, again.text);
    assert.equal(again.replayed, 'true');
    assert.equal(again.text, first.text);
  });

  void it('forgets keys after 24 hours: the request is new, and the sweep deletes them', async () => {
    const key = newKey();
    const first = await post('/datasets', datasetBody('old key'), key);
    assert.equal(first.status, 201, first.text);
    const dayAgo = Date.now() - IDEMPOTENCY_WINDOW_MS - 1000;
    await h.database.db
      .updateTable('idempotency_keys')
      .set({ created_at: dayAgo })
      .where('key', '=', key)
      .execute();
    // Even another request is welcome under a forgotten key.
    const fresh = await post('/datasets', datasetBody('old key, new request'), key);
    assert.equal(fresh.status, 201, fresh.text);
    assert.equal(fresh.replayed, null);
    assert.notEqual(fresh.json.datasetId, first.json.datasetId);

    // The sweep deletes expired keys, oldest first and a bounded batch at a time.
    const db = h.database.db;
    const expired = [newKey(), newKey(), newKey()];
    for (const [i, k] of expired.entries()) {
      assert.equal((await post('/datasets', datasetBody(`expiring ${i}`), k)).status, 201);
      await db
        .updateTable('idempotency_keys')
        .set({ created_at: dayAgo - 10_000 + i })
        .where('key', '=', k)
        .execute();
    }
    const expiredLeft = async () =>
      (
        await db
          .selectFrom('idempotency_keys')
          .select('key')
          .where('created_at', '<', Date.now() - IDEMPOTENCY_WINDOW_MS)
          .execute()
      ).length;
    const count = await expiredLeft();
    assert.ok(count >= 3);
    assert.equal(await deleteExpiredIdempotencyKeys(db, Date.now(), 2), 2);
    assert.equal(await keyRow(expired[0]!), undefined, 'the oldest goes first');
    assert.equal(await expiredLeft(), count - 2);
    // The worker's housekeeping takes the rest.
    await sweep({ db, objects: h.services.objects, records: h.services.records });
    assert.equal(await expiredLeft(), 0);
    assert.notEqual(await keyRow(key), undefined, 'the key in use again is kept');
  });

  void it('declares the header in the OpenAPI document of the three routes', async () => {
    const res = await h.api<{ paths: Record<string, Record<string, { parameters?: Json[] }>> }>(
      'GET',
      '/openapi.json',
    );
    assert.equal(res.status, 200);
    const routes = [
      '/api/v1/datasets',
      '/api/v1/datasets/{id}/uploadUrl',
      '/api/v1/datasets/{id}/records:load',
    ];
    for (const path of routes) {
      const op = res.json.paths[path]?.post;
      assert.ok(op !== undefined, `${path} in ${Object.keys(res.json.paths).join(' ')}`);
      const header = (op.parameters ?? []).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      assert.ok(header !== undefined, `${path} declares Idempotency-Key`);
      assert.equal(header.required, false);
    }
  });
});
