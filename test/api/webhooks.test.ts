// Signed webhooks for apps (#13), tried as a partner would: a receiver on 127.0.0.1 (allowlisted)
// gets one signed delivery per finished job, a failing receiver gets it on a later try (also
// across a restart), deliveries are listed and redelivered; loopback is refused without the
// allowlist. Also the job lifecycle's log lines and metrics.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/lib/logger.js';
import { claimDelivery } from '../../src/domain/webhooks/deliveries.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type JobBody } from '../support/fixture.js';
import { onboardApp, ownToken, type TestPartner } from '../support/onboarding.js';
import { requestUpload, uploadAndWait } from '../support/loading.js';
import { sweep } from '../../src/worker/sweep.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
}
interface Body {
  event: string;
  deliveryId: string;
  occurredAt: string;
  installationId: number;
  workspaceId: number;
  job: JobBody;
}
interface DeliveryView {
  deliveryId: string;
  event: string;
  jobId: string | null;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];

/** How a partner checks a delivery: HMAC-SHA256 of the raw body, compared in constant time. */
function verified(secret: string, raw: string, header: string | string[] | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(typeof header === 'string' ? header : '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

await forEachDatabase('app webhooks', (target) => {
  let h: Fixture;
  let receiver: Server;
  let base = '';
  const received: Received[] = [];
  /** Statuses the receiver answers per path, in turn; 204 once they run out. */
  const plans = new Map<string, number[]>();
  const lines: Record<string, unknown>[] = [];
  let partner: TestPartner;
  let jwt = '';

  const call = async <T>(method: string, path: string, body?: unknown, token = jwt) => {
    const res = await fetch(`${h.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      json: (text === '' ? null : JSON.parse(text)) as T,
      text,
      type: res.headers.get('content-type'),
    };
  };
  const setHook = (path: string) =>
    call<{ url: string; secret: string; events: string[] }>('PUT', '/apps/me/webhook', {
      url: `${base}${path}`,
    });
  const deliveriesTo = (path: string) => received.filter((r) => r.path === path);

  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        received.push({ path, headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
        const status = plans.get(path)?.shift() ?? 204;
        res.writeHead(status);
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk
          .toString()
          .split('\n')
          .filter((l) => l !== ''))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    h = await startFixture(
      target,
      { WEBHOOK_URL_ALLOWLIST: '127.0.0.1/32', WEBHOOK_RETRY_BASE_MS: '50', LOG_LEVEL: 'info' },
      { logger: createLogger('info', stream) },
    );
    partner = await onboardApp(h, 'Hook app', 'ES256');
    jwt = await partner.jwt();
    // Jobs are created through the hook app's own installation.
    h.token = await ownToken(h, partner);
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await h.close();
  });

  void it('refuses loopback, private and metadata destinations that are not allowlisted', async () => {
    for (const url of [
      'http://127.0.0.2:9/hook',
      'http://[::1]:9/hook',
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest',
      'http://metadata.google.internal/x',
      'ftp://example.com/hook',
      'not a url',
    ]) {
      const res = await call<{ status: number; errors: Record<string, string[]> }>(
        'PUT',
        '/apps/me/webhook',
        { url },
      );
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.match(res.type ?? '', /application\/problem\+json/);
      assert.ok(res.json.errors.url !== undefined, res.text);
    }
    assert.equal((await call('GET', '/apps/me/webhook')).status, 404);
    // An access token is not the app's JWT.
    assert.equal((await call('GET', '/apps/me/webhook', undefined, h.token)).status, 401);
  });

  void it('sets the webhook with a secret shown once, shows it without, replaces it with a new secret', async () => {
    const first = await setHook('/first');
    assert.equal(first.status, 201, first.text);
    assert.match(first.json.secret, /^whsec_/);
    assert.deepEqual(first.json.events, [
      'dataset.job.completed',
      'dataset.job.failed',
      'dataset.job.expired',
    ]);
    const shown = await call<Record<string, unknown>>('GET', '/apps/me/webhook');
    assert.equal(shown.status, 200);
    assert.equal(shown.json.url, `${base}/first`);
    assert.ok(!('secret' in shown.json));
    assert.ok(!shown.text.includes(first.json.secret));
    const again = await setHook('/second');
    assert.equal(again.status, 200);
    assert.notEqual(again.json.secret, first.json.secret);
    // The secret is sealed at rest: the database does not hold it as written.
    const row = await h.database.db.selectFrom('app_webhooks').selectAll().executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(again.json.secret));
    assert.equal((await call('DELETE', '/apps/me/webhook')).status, 204);
    assert.equal((await call('GET', '/apps/me/webhook')).status, 404);
    assert.equal((await call('DELETE', '/apps/me/webhook')).status, 404);
  });

  void it('delivers only the events the app chose; unknown or no events are refused', async () => {
    for (const events of [['dataset.job.done'], [], 'dataset.job.failed']) {
      const res = await call('PUT', '/apps/me/webhook', { url: `${base}/chosen`, events });
      assert.equal(res.status, 400, `${JSON.stringify(events)}: ${res.text}`);
      assert.match(res.type ?? '', /application\/problem\+json/);
    }
    const set = await call<{ events: string[] }>('PUT', '/apps/me/webhook', {
      url: `${base}/chosen`,
      events: ['dataset.job.failed'],
    });
    assert.ok(set.status === 200 || set.status === 201, set.text);
    assert.deepEqual(set.json.events, ['dataset.job.failed']);
    assert.deepEqual((await call<{ events: string[] }>('GET', '/apps/me/webhook')).json.events, [
      'dataset.job.failed',
    ]);
    const ds = await h.defineDataset(PROPS, ['id']);
    const ok = await uploadAndWait(h, ds, 'id,name\n1,a\n');
    const bad = await uploadAndWait(h, ds, 'id,name\nnot a number,a\n', { mode: 'replace' });
    await eventually('the failed job delivered', () =>
      deliveriesTo('/chosen').length >= 1 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 300)); // and nothing for the completed one
    const got = deliveriesTo('/chosen').map((r) => JSON.parse(r.raw) as Body);
    assert.deepEqual(
      got.map((b) => [b.event, b.job.datasetJobId]),
      [['dataset.job.failed', bad.datasetJobId]],
    );
    assert.notEqual(ok.datasetJobId, bad.datasetJobId);
  });

  void it('delivers one signed event per finished job: completed and failed, with the job view', async () => {
    const { json: hook } = await setHook('/jobs');
    const ds = await h.defineDataset(PROPS, ['id']);
    const ok = await uploadAndWait(h, ds, 'id,name\n1,a\n2,b\n');
    assert.equal(ok.currentStatus.status, 'Completed');
    const bad = await uploadAndWait(h, ds, 'id,name\nnot a number,a\n', { mode: 'replace' });
    assert.equal(bad.currentStatus.status, 'Failed');

    await eventually('two deliveries', () => (deliveriesTo('/jobs').length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300)); // no third one follows
    const got = deliveriesTo('/jobs');
    assert.equal(got.length, 2);
    const byJob = new Map<string, Body>();
    for (const r of got) {
      assert.ok(verified(hook.secret, r.raw, r.headers['x-dx-signature-256']), 'signature verifies');
      assert.ok(!verified('whsec_wrong', r.raw, r.headers['x-dx-signature-256']));
      assert.equal(r.headers['content-type'], 'application/json');
      const body = JSON.parse(r.raw) as Body;
      assert.equal(r.headers['x-dx-event'], body.event);
      assert.equal(r.headers['x-dx-delivery'], body.deliveryId);
      assert.equal(body.installationId, partner.installationId);
      assert.equal(body.workspaceId, partner.workspaceId);
      byJob.set(body.job.datasetJobId, body);
    }
    assert.equal(byJob.get(ok.datasetJobId)?.event, 'dataset.job.completed');
    assert.equal(byJob.get(ok.datasetJobId)?.job.currentStatus.logData?.rowsLoaded, 2);
    const failed = byJob.get(bad.datasetJobId);
    assert.equal(failed?.event, 'dataset.job.failed');
    assert.equal(failed?.job.currentStatus.status, 'Failed');
    assert.ok((failed?.job.currentStatus.errorData?.errorCount ?? 0) >= 1);

    const list = await call<{ metadata: { count: number }; data: DeliveryView[] }>(
      'GET',
      '/apps/me/webhook/deliveries',
    );
    assert.equal(list.status, 200);
    const mine = list.json.data.filter((d) => d.jobId === ok.datasetJobId || d.jobId === bad.datasetJobId);
    assert.equal(mine.length, 2);
    for (const d of mine) {
      assert.equal(d.status, 'delivered');
      assert.equal(d.attempts, 1);
      assert.equal(d.lastStatusCode, 204);
    }

    // The lifecycle in the log: every step of the failed job, the failure at warn with its first error.
    const jobLines = lines.filter((l) => l.jobId === bad.datasetJobId && l.component === 'jobs');
    assert.deepEqual(
      jobLines.map((l) => l.event),
      ['job.created', 'job.queued', 'job.started', 'job.failed'],
    );
    const failLine = jobLines.at(-1) as Record<string, unknown>;
    assert.equal(failLine.level, 40);
    assert.equal(failLine.msg, 'job failed');
    assert.equal(failLine.datasetId, ds);
    assert.equal(failLine.installationId, partner.installationId);
    assert.equal(failLine.mode, 'replace');
    assert.ok((failLine.errorCount as number) >= 1);
    assert.equal(typeof (failLine.firstError as { message: string }).message, 'string');
    assert.equal(typeof failLine.durationMs, 'number');
    const doneLine = lines.find((l) => l.jobId === ok.datasetJobId && l.event === 'job.completed');
    assert.equal(doneLine?.level, 30);
    assert.equal(doneLine?.rowsLoaded, 2);
    // Health probes are not logged at info.
    const before = lines.length;
    await fetch(`${h.baseUrl}/healthz`);
    await fetch(`${h.baseUrl}/readyz`);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      !lines
        .slice(before)
        .some((l) => JSON.stringify(l).includes('/healthz') || JSON.stringify(l).includes('/readyz')),
    );

    // And in the metrics.
    const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
    assert.match(metrics, /dx_jobs_finished_total\{type="uploadUrl",status="Failed"\} [1-9]/);
    assert.match(metrics, /dx_jobs_finished_total\{type="uploadUrl",status="Completed"\} [1-9]/);
    assert.match(metrics, /dx_job_duration_seconds_count\{type="uploadUrl",status="Failed"\} [1-9]/);
    assert.match(metrics, /dx_job_rows_loaded_total\{type="uploadUrl"\} [2-9]/);
    assert.match(metrics, /dx_jobs_queued 0/);
    assert.match(metrics, /dx_jobs_running 0/);
    assert.match(
      metrics,
      /dx_webhook_deliveries_total\{event="dataset\.job\.failed",outcome="delivered"\} [1-9]/,
    );
    const buckets = metrics.split('\n').filter((l) => l.startsWith('dx_api_request_duration_seconds_bucket'));
    assert.ok(
      buckets.some((l) => l.includes('le="300"') && l.includes('route="/api/v1/datasets/:id/uploadUrl"')),
    );
  });

  void it('delivers dataset.changed, asked for by name, with a cursor the feed takes, once per commit', async () => {
    const set = await call<{ secret: string; events: string[] }>('PUT', '/apps/me/webhook', {
      url: `${base}/changed`,
      events: ['dataset.changed'],
    });
    assert.ok(set.status === 200 || set.status === 201, set.text);
    const ds = await h.defineDataset(PROPS, ['id']);
    const loaded = await uploadAndWait(h, ds, 'id,name\n1,a\n2,b\n');
    assert.equal(loaded.currentStatus.status, 'Completed');
    const failed = await uploadAndWait(h, ds, 'id,name\nx,a\n', { mode: 'upsert' });
    assert.equal(failed.currentStatus.status, 'Failed');
    const patched = await call(
      'PATCH',
      `/datasets/${ds}`,
      {
        schema: { properties: [...PROPS, { name: 'city', type: 'string' }], primaryKey: ['id'] },
      },
      h.token,
    );
    assert.equal(patched.status, 200, patched.text);

    await eventually('two deliveries', () => (deliveriesTo('/changed').length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300)); // none for the failed load
    const got = deliveriesTo('/changed');
    assert.equal(got.length, 2);
    const bodies = got.map((r) => {
      assert.ok(verified(set.json.secret, r.raw, r.headers['x-dx-signature-256']), 'signature verifies');
      return JSON.parse(r.raw) as {
        event: string;
        datasetId: string;
        changesCursor: string;
        installationId: number;
      };
    });
    for (const body of bodies) {
      assert.equal(body.event, 'dataset.changed');
      assert.equal(body.datasetId, ds);
      assert.equal(body.installationId, partner.installationId);
    }
    // The first cursor follows the load: the feed from it gives the schema change and nothing else.
    const [afterLoad, afterSchema] = bodies.map((b) => b.changesCursor);
    const feed = await call<{ data: { op: string }[] }>(
      'GET',
      `/datasets/${ds}/changes?since=${encodeURIComponent(afterLoad ?? '')}`,
      undefined,
      h.token,
    );
    assert.equal(feed.status, 200, feed.text);
    assert.deepEqual(
      feed.json.data.map((e) => e.op),
      ['schemaChanged', 'upsert', 'upsert'],
    );
    // The last cursor is where a read of the records now starts the feed.
    const read = await call<{ metadata: { changesCursor: string } }>(
      'GET',
      `/datasets/${ds}/records`,
      undefined,
      h.token,
    );
    assert.equal(afterSchema, read.json.metadata.changesCursor);
    const list = await call<{ data: DeliveryView[] }>('GET', '/apps/me/webhook/deliveries');
    const views = list.json.data.filter((d) => d.event === 'dataset.changed');
    assert.equal(views.length, 2);
    for (const v of views) assert.equal(v.jobId, null);
  });

  void it('delivers a delete by key as any load: dataset.job.completed with its counts', async () => {
    await setHook('/deletes');
    const ds = await h.defineDataset(PROPS, ['id']);
    await uploadAndWait(h, ds, 'id,name\n1,a\n2,b\n');
    const job = await uploadAndWait(h, ds, 'id\n2\n3\n', { mode: 'delete' });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    const body = await eventually('the delete delivered', () =>
      deliveriesTo('/deletes')
        .map((r) => JSON.parse(r.raw) as Body)
        .find((b) => b.job.datasetJobId === job.datasetJobId),
    );
    assert.equal(body.event, 'dataset.job.completed');
    assert.equal(body.job.mode, 'delete');
    assert.equal(body.job.currentStatus.logData?.recordsDeleted, 1);
    assert.equal(body.job.currentStatus.logData?.keysNotFound, 1);
  });

  void it('retries a failing receiver with backoff: the fourth try gets it, and redelivery sends it again', async () => {
    const { json: hook } = await setHook('/flaky');
    plans.set('/flaky', [500, 503, 404]);
    const ds = await h.defineDataset(PROPS, ['id']);
    const job = await uploadAndWait(h, ds, 'id,name\n1,a\n');
    await eventually('the fourth try', () => (deliveriesTo('/flaky').length >= 4 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    const tries = deliveriesTo('/flaky');
    assert.equal(tries.length, 4, 'no try after the one that succeeded');
    const ids = new Set(tries.map((t) => t.headers['x-dx-delivery']));
    assert.equal(ids.size, 1, 'every try is the same delivery');
    for (const t of tries) assert.ok(verified(hook.secret, t.raw, t.headers['x-dx-signature-256']));
    const [deliveryId] = [...ids] as string[];
    const list = await call<{ data: DeliveryView[] }>('GET', '/apps/me/webhook/deliveries');
    const d = list.json.data.find((x) => x.deliveryId === deliveryId);
    assert.equal(d?.jobId, job.datasetJobId);
    assert.equal(d?.status, 'delivered');
    assert.equal(d?.attempts, 4);

    const again = await call<DeliveryView>('POST', `/apps/me/webhook/deliveries/${deliveryId}:redeliver`);
    assert.equal(again.status, 202, again.text);
    assert.equal(again.json.status, 'pending');
    await eventually('the redelivery', () => (deliveriesTo('/flaky').length >= 5 ? true : undefined));
    assert.equal(deliveriesTo('/flaky')[4]?.headers['x-dx-delivery'], deliveryId);
    const missing = await call('POST', '/apps/me/webhook/deliveries/nope:redeliver');
    assert.equal(missing.status, 404);
  });

  void it('keeps retrying across a restart of the service', async () => {
    await setHook('/restart');
    plans.set('/restart', [500, 500, 500, 500, 500, 500, 500, 500, 500, 500]);
    const ds = await h.defineDataset(PROPS, ['id']);
    const job = await uploadAndWait(h, ds, 'id,name\n1,a\n');
    await eventually('two failed tries', () => (deliveriesTo('/restart').length >= 2 ? true : undefined));
    await h.restart();
    plans.set('/restart', []); // the receiver is back
    const tries = deliveriesTo('/restart').length;
    await eventually('the delivery after the restart', async () => {
      const list = await call<{ data: DeliveryView[] }>('GET', '/apps/me/webhook/deliveries');
      const d = list.json.data.find((x) => x.jobId === job.datasetJobId);
      return d?.status === 'delivered' ? d : undefined;
    });
    assert.ok(deliveriesTo('/restart').length > tries);
    // The list pages like the service's other lists.
    type Page = { metadata: { count: number; nextPageToken: string | null }; data: DeliveryView[] };
    const p1 = await call<Page>('GET', '/apps/me/webhook/deliveries?pageSize=1');
    assert.equal(p1.json.metadata.count, 1);
    assert.equal(p1.json.data[0]?.jobId, job.datasetJobId, 'newest first');
    const token = p1.json.metadata.nextPageToken ?? '';
    assert.notEqual(token, '');
    const p2 = await call<Page>('GET', `/apps/me/webhook/deliveries?pageSize=1&pageToken=${token}`);
    assert.equal(p2.json.metadata.count, 1);
    assert.notEqual(p2.json.data[0]?.deliveryId, p1.json.data[0]?.deliveryId);
    assert.equal((await call('GET', '/apps/me/webhook/deliveries?pageToken=bogus')).status, 400);
    const last = deliveriesTo('/restart').at(-1) as Received;
    assert.equal((JSON.parse(last.raw) as Body).job.datasetJobId, job.datasetJobId);
  });

  void it('delivers dataset.job.expired when an upload URL lapses unused', async () => {
    await setHook('/expired');
    const ds = await h.defineDataset(PROPS, ['id']);
    const upload = await requestUpload(h, ds);
    await h.database.db
      .updateTable('dataset_jobs')
      .set({ upload_expires_at: Date.now() - 1 })
      .where('id', '=', upload.jobId)
      .execute();
    // The worker's housekeeping, run now rather than in 30 seconds.
    const { database, objects, records } = h.services;
    await sweep({ db: database.db, objects, records });
    const got = await eventually('the expired event', () => deliveriesTo('/expired')[0]);
    const body = JSON.parse(got.raw) as Body;
    assert.equal(body.event, 'dataset.job.expired');
    assert.equal(body.job.datasetJobId, upload.jobId);
    assert.equal(body.job.currentStatus.status, 'Expired');
    assert.ok(lines.some((l) => l.jobId === upload.jobId && l.event === 'job.expired' && l.level === 30));
  });

  void it('lets one worker at a time claim a delivery, however many race for it', async () => {
    await setHook('/race');
    const db = h.database.db;
    const now = Date.now();
    const ids = Array.from({ length: 12 }, (_, i) => `race-${target.name}-${i}`);
    await db
      .insertInto('webhook_deliveries')
      .values(
        ids.map((id) => ({
          id,
          app_id: partner.app.id,
          installation_id: partner.installationId,
          workspace_id: partner.workspaceId,
          job_id: 'gone',
          event: 'dataset.job.completed' as const,
          occurred_at: '2026-01-01T00:00:00.000000',
          created_at: '2026-01-01T00:00:00.000000',
          status: 'pending' as const,
          attempts: 0,
          // Not yet due for the service's own worker; due for the racers below.
          next_attempt_at: now + 60_000,
          give_up_at: now + 120_000,
          lease_owner: null,
          lease_expires_at: null,
          last_attempt_at: null,
          last_status_code: null,
          last_error: null,
          delivered_at: null,
        })),
      )
      .execute();
    await db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: now - 1 })
      .where('id', 'in', ids)
      .execute();
    const skipLocked = h.database.capabilities.skipLocked;
    const claimed = (
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          const mine: string[] = [];
          for (;;) {
            const d = await claimDelivery(db, { owner: `racer-${w}`, leaseMs: 60_000, skipLocked });
            if (d === undefined) return mine;
            mine.push(d.id);
          }
        }),
      )
    ).flat();
    const raced = claimed.filter((id) => ids.includes(id));
    assert.equal(raced.length, new Set(raced).size, 'no delivery claimed twice');
    // The service's own worker may take some of them too: each row is still claimed exactly once.
    const rows = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts'])
      .where('id', 'in', ids)
      .execute();
    assert.equal(rows.length, ids.length);
    for (const r of rows) assert.equal(Number(r.attempts), 1, `${r.id} claimed once`);
    await db.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
  });
});
