// PROXY_RATE_LIMIT across proxy processes: two `dx serve --role proxy` on one database together
// admit about what one bucket would, and a store that stops answering leaves each process limiting
// alone, which its metric and one log line say, until it answers again.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { SqlProxyIdStore } from '../../src/domain/identity/proxy-ids.js';
import { forEachDatabase, type IsolatedDatabase } from '../support/databases.js';
import { startDevUpstream, type DevUpstream } from '../support/dev-upstream.js';
import { eventually } from '../support/poll.js';
import { BANNERS, serve, type Served } from '../support/served.js';

const AUTH = `Basic ${Buffer.from('testApp:s3cr3t-api-key|1').toString('base64')}`;
const RATE = 10;
const BURST = 10;

/** A proxy process on `db` with the limit under test; its proxy and admin URLs once listening. */
async function proxyOn(db: IsolatedDatabase, upstream: DevUpstream) {
  const served = serve('proxy', {
    env: {
      DATABASE_URL: db.processUrl,
      UPSTREAM_URL: upstream.url,
      PROXY_RATE_LIMIT: String(RATE),
      PROXY_RATE_BURST: String(BURST),
      PROXY_RATE_SYNC_MS: '50',
    },
  });
  return { served, url: await served.banner(BANNERS.proxy), admin: await served.banner(BANNERS.admin) };
}

async function status(url: string, proxyId: string): Promise<number> {
  const r = await fetch(`${url}/v4/echoes`, { headers: { authorization: AUTH, 'x-proxyvid': proxyId } });
  await r.arrayBuffer();
  return r.status;
}

/** The value of dx_proxy_rate_limit_shared on an admin URL, or null when it is not there. */
async function sharedGauge(admin: string): Promise<number | null> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const m = /^dx_proxy_rate_limit_shared (\d+)$/m.exec(text);
  return m === null ? null : Number(m[1]);
}

/** Takes the write lock on the buckets from outside, as a stuck or unreachable store would hold them. */
async function lockBuckets(db: IsolatedDatabase): Promise<() => Promise<void>> {
  if (db.schema === null) {
    const conn = new BetterSqlite3(db.url.slice('sqlite:'.length));
    conn.prepare('begin immediate').run();
    return () => {
      conn.prepare('rollback').run();
      conn.close();
      return Promise.resolve();
    };
  }
  const client = new pg.Client({ connectionString: db.processUrl });
  await client.connect();
  await client.query('begin');
  await client.query('lock table proxy_rate_buckets in access exclusive mode');
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}

const storeMessages = (p: Served) =>
  p
    .lines()
    .map((l) => l.msg)
    .filter((m): m is string => typeof m === 'string' && m.startsWith('rate-limit store'));

await forEachDatabase('the proxy rate limit across processes', (target) => {
  let db: IsolatedDatabase;
  let upstream: DevUpstream;
  before(async () => {
    db = await target.create();
    upstream = await startDevUpstream();
  });
  after(async () => {
    await upstream.close();
    await db.dispose();
  });

  void it('two proxy processes on one database together admit about one bucket, not two', async () => {
    const { id } = await new SqlProxyIdStore(db.database.db).create('shared');
    const a = await proxyOn(db, upstream);
    const b = await proxyOn(db, upstream);
    try {
      let admitted = 0;
      let refused = 0;
      const started = performance.now();
      // Both processes, in turn, as fast as one client goes: far above the rate, for 3 s.
      while (performance.now() - started < 3000) {
        for (const p of [a, b]) {
          const s = await status(p.url, id);
          if (s === 200) admitted++;
          else if (s === 429) refused++;
          else assert.fail(`status ${s}`);
        }
      }
      const seconds = (performance.now() - started) / 1000;
      const oneBucket = BURST + RATE * seconds;
      // Each process alone would admit 2 × oneBucket. The design's bound over one bucket is one
      // burst plus a sync interval's refill per extra process, and its debt is paid back after.
      assert.ok(
        admitted <= oneBucket + BURST + RATE,
        `admitted ${admitted} in ${seconds.toFixed(1)} s; one bucket: ${oneBucket.toFixed(0)}`,
      );
      assert.ok(admitted >= oneBucket * 0.7, `admitted ${admitted}; one bucket: ${oneBucket.toFixed(0)}`);
      assert.ok(refused > admitted, 'the client went far above the rate');
      assert.equal(await sharedGauge(a.admin), 1);
      assert.equal(await sharedGauge(b.admin), 1);
    } finally {
      a.served.cleanup();
      b.served.cleanup();
    }
  });

  void it('a store that stops answering leaves a per-process limit, said once by a log line and the metric', async () => {
    const { id } = await new SqlProxyIdStore(db.database.db).create('outage');
    const p = await proxyOn(db, upstream);
    let unlock: (() => Promise<void>) | null = null;
    try {
      assert.equal(await status(p.url, id), 200);
      unlock = await lockBuckets(db);
      // Reports happen while requests come: keep a trickle going until the process gives up on it.
      const degraded = await eventually(async () => {
        await status(p.url, id);
        return (await sharedGauge(p.admin)) === 0;
      }, 30_000);
      assert.ok(degraded, `still shared: ${storeMessages(p.served).join(' | ')}`);
      // Its own bucket at the whole rate (one process, no cluster workers): refilled, then spent.
      await new Promise((r) => setTimeout(r, 1200));
      const statuses: number[] = [];
      for (let i = 0; i < 4 * BURST; i++) statuses.push(await status(p.url, id));
      assert.ok(statuses.includes(200), 'not refusing every request');
      assert.ok(statuses.includes(429), `still limited: ${statuses.join(',')}`);
      assert.deepEqual(storeMessages(p.served), [
        'rate-limit store unreachable: each proxy process limits alone (its share of PROXY_RATE_LIMIT) until it answers',
      ]);
      const warning = p.served.lines().find((l) => l.msg === storeMessages(p.served)[0]);
      assert.equal(warning?.level, 40, 'a warning');

      await unlock();
      unlock = null;
      const recovered = await eventually(async () => {
        await status(p.url, id);
        return (await sharedGauge(p.admin)) === 1;
      }, 30_000);
      assert.ok(recovered, 'shared again');
      // The gauge moves before the log line reaches the log file (the logger writes asynchronously).
      const said = await eventually(async () => storeMessages(p.served).length >= 2, 5_000);
      assert.ok(said, `no second line: ${storeMessages(p.served).join(' | ')}`);
      assert.equal(storeMessages(p.served).length, 2);
      assert.match(storeMessages(p.served)[1] ?? '', /reachable again/);
    } finally {
      await unlock?.();
      p.served.cleanup();
    }
  });
});
