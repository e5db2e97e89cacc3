// The client package's own logic without a service: token refresh timing on a fake clock, app JWT
// signing, problems of any body, a resumable session resuming after failed slices, and a job
// waited for across a restart of the service.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  DxApp,
  DxClient,
  DxProblemError,
  TokenCache,
  signAppJwt,
  type FetchLike,
  type UploadProgress,
} from '@dataset-exchange/client';

const START = Date.parse('2026-01-01T00:00:00Z');
const rsaPem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
/** The API's timestamps: UTC without a zone suffix, six fractional digits. */
const apiTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000');

function json(status: number, body: unknown, type = 'application/json'): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });
}

describe('access tokens of an installation (fake clock)', () => {
  /** A service that mints tokens living `ttl` ms and answers /auth/me to the current ones. */
  function fakeService(clock: { now: number }, ttl = 3_600_000) {
    const state = { minted: 0, jwts: [] as string[], refused: new Set<string>(), seen: [] as string[] };
    const fetch: FetchLike = async (input, init) => {
      const url = new URL(String(input));
      const auth = String((init?.headers as Record<string, string>).authorization).replace('Bearer ', '');
      if (url.pathname === '/api/v1/auth/clientToken') {
        state.jwts.push(auth);
        state.minted++;
        // A round trip takes a while: concurrent callers must still share this mint.
        await new Promise((r) => setTimeout(r, 5));
        return json(200, {
          tokenType: 'Bearer',
          token: `tok-${state.minted}`,
          expiresAt: apiTime(clock.now + ttl),
        });
      }
      state.seen.push(auth);
      if (state.refused.has(auth))
        return json(
          401,
          { type: 'about:blank', title: 'Unauthorized', status: 401 },
          'application/problem+json',
        );
      return json(200, { platformAppId: 'app' });
    };
    return { state, fetch };
  }

  /** An app's client for installation 4, speaking to the fake service at `baseUrl`. */
  function installationOn(clock: { now: number }, baseUrl: string) {
    const { state, fetch } = fakeService(clock);
    const app = new DxApp({ baseUrl, appId: 'app_1', privateKey: rsaPem(), fetch, now: () => clock.now });
    return { state, dx: app.installation(4, 'wsk_x') };
  }

  it('mints once, reuses the token, and replaces it a minute before expiresAt', async () => {
    const clock = { now: START };
    const { state, dx } = installationOn(clock, 'http://svc');
    await dx.me();
    assert.equal(state.minted, 1);
    assert.deepEqual(state.seen, ['tok-1']);

    clock.now = START + 3_600_000 - 61_000; // 61 s left: still good
    await dx.me();
    assert.equal(state.minted, 1);

    clock.now = START + 3_600_000 - 60_000; // exactly a minute left: replaced before use
    await dx.me();
    assert.equal(state.minted, 2);
    assert.equal(state.seen.at(-1), 'tok-2');

    clock.now += 3_600_000; // long past: callers at once share one mint
    await Promise.all([dx.me(), dx.me(), dx.me(), dx.me()]);
    assert.equal(state.minted, 3);
    assert.deepEqual(state.seen.slice(-4), ['tok-3', 'tok-3', 'tok-3', 'tok-3']);

    // The app JWT that minted them carries the fake clock's time, and is signed anew when old.
    const claims = decodeJwt(state.jwts[0] ?? '');
    assert.equal(claims.iss, 'app_1');
    assert.equal(claims.iat, START / 1000);
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 300);
    assert.equal(decodeProtectedHeader(state.jwts[0] ?? '').alg, 'RS256');
    // Five minutes on, the first JWT has lapsed: the next mint signs a new one at the clock's time.
    assert.notEqual(state.jwts[1], state.jwts[0]);
    assert.equal(decodeJwt(state.jwts[1] ?? '').iat, (START + 3_540_000) / 1000);
  });

  it('replaces a token the service refuses (401) at once and retries the request', async () => {
    const clock = { now: START };
    const { state, dx } = installationOn(clock, 'http://svc/api/v1/');
    await dx.me();
    state.refused.add('tok-1'); // revoked early
    await dx.me();
    assert.equal(state.minted, 2);
    assert.deepEqual(state.seen, ['tok-1', 'tok-1', 'tok-2']);
    assert.equal(state.jwts[1], state.jwts[0]); // the app JWT, still young, is reused
  });

  it('keeps tokens per installation and permission set', async () => {
    const clock = { now: START };
    const mints: string[] = [];
    const cache = new TokenCache({
      now: () => clock.now,
      mint: async (key) => {
        mints.push(key);
        return { token: `${key}#${mints.length}`, expiresAt: clock.now + 120_000 };
      },
    });
    assert.equal(await cache.get('a'), 'a#1');
    assert.equal(await cache.get('b'), 'b#2');
    assert.equal(await cache.get('a'), 'a#1');
    clock.now += 59_999; // 60.001 s left
    assert.equal(await cache.get('a'), 'a#1');
    clock.now += 1;
    assert.equal(await cache.get('a'), 'a#3');
    assert.equal(await cache.get('a', 'a#1'), 'a#3'); // a stale token already replaced: kept
    assert.equal(await cache.get('a', 'a#3'), 'a#4');
  });
});

describe('app JWTs', () => {
  it('signs RS256 for RSA keys and ES256 for EC keys, with kid and audience', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const jwt = await signAppJwt({
      appId: 'a',
      privateKey: ec,
      keyId: 'k1',
      audience: 'aud',
      issuedAt: 1000,
      ttlSeconds: 60,
    });
    assert.deepEqual(decodeProtectedHeader(jwt), { alg: 'ES256', typ: 'JWT', kid: 'k1' });
    assert.deepEqual(decodeJwt(jwt), { iss: 'a', iat: 1000, exp: 1060, aud: 'aud' });
    await assert.rejects(signAppJwt({ appId: 'a', privateKey: ec, ttlSeconds: 3601 }), RangeError);
  });
});

describe('problems', () => {
  it('reads problem+json and any other failure as DxProblemError', async () => {
    const answers = [
      json(
        422,
        {
          type: 'https://example/t',
          title: 'Unprocessable Content',
          status: 422,
          detail: 'key reused',
          errors: { a: ['b'] },
          traceId: 'r1',
          source: 'api',
        },
        'application/problem+json',
      ),
      new Response('<html>bad gateway</html>', {
        status: 502,
        statusText: 'Bad Gateway',
        headers: { 'content-type': 'text/html' },
      }),
      new Response('slow down', { status: 429, headers: { 'retry-after': '3' } }),
    ];
    const dx = new DxClient({
      baseUrl: 'http://svc',
      accessToken: 't',
      fetch: async () => answers.shift() ?? json(500, {}),
    });
    const first = await dx.getDataset('d1').catch((e: unknown) => e);
    assert.ok(first instanceof DxProblemError);
    assert.deepEqual(
      [
        first.status,
        first.type,
        first.title,
        first.detail,
        first.errors,
        first.traceId,
        first.source,
        first.request,
      ],
      [
        422,
        'https://example/t',
        'Unprocessable Content',
        'key reused',
        { a: ['b'] },
        'r1',
        'api',
        'GET /api/v1/datasets/d1',
      ],
    );
    assert.equal(first.message, 'GET /api/v1/datasets/d1: 422 Unprocessable Content: key reused');
    const second = await dx.listDatasets().catch((e: unknown) => e);
    assert.ok(second instanceof DxProblemError);
    assert.deepEqual(
      [second.status, second.type, second.title, second.detail],
      [502, 'about:blank', 'Bad Gateway', '<html>bad gateway</html>'],
    );
    const third = await dx.listDatasets().catch((e: unknown) => e);
    assert.ok(third instanceof DxProblemError);
    assert.equal(third.retryAfterSeconds, 3);
  });
});

describe('resumable uploads', () => {
  /** A resumable session as the service keeps one; `failures` breaks given PUTs of slices. */
  function fakeSession(failures: Set<number>, loseLastAnswer = false) {
    const stored: number[] = [];
    let total: number | null = null;
    let puts = 0;
    const fetch: FetchLike = async (input, init) => {
      const url = new URL(String(input));
      if (url.pathname.endsWith('/uploadUrl'))
        return json(202, { datasetId: 'd', jobId: 'j', url: 'http://svc/uploads/j?expires=1&signature=s' });
      const range = String((init?.headers as Record<string, string>)['content-range']);
      const persisted = () =>
        stored.length === 0
          ? new Response(null, { status: 308 })
          : new Response(null, { status: 308, headers: { range: `bytes=0-${stored.length - 1}` } });
      const status = /^bytes \*\/(\d+|\*)$/.exec(range);
      if (status !== null) {
        if (total !== null && stored.length === total)
          return json(200, { datasetId: 'd', jobId: 'j', bytes: total });
        return persisted();
      }
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range);
      assert.ok(m !== null, range);
      const body = init?.body as Uint8Array;
      const n = ++puts;
      if (failures.has(n)) {
        stored.push(...body.subarray(0, Math.floor(body.length / 2))); // half got through
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
        });
      }
      const start = Number(m[1]);
      if (start > stored.length) return persisted();
      stored.splice(start, stored.length - start, ...body);
      if (m[3] !== '*') total = Number(m[3]);
      if (total !== null && stored.length === total) {
        if (loseLastAnswer) throw new TypeError('fetch failed');
        return json(200, { datasetId: 'd', jobId: 'j', bytes: total });
      }
      return persisted();
    };
    return { stored, fetch };
  }

  it('resumes from what the session persisted after failed slices', async () => {
    const data = new TextEncoder().encode(
      'id,name\n' + Array.from({ length: 50 }, (_, i) => `${i},n${i}`).join('\n'),
    );
    const session = fakeSession(new Set([2, 3]));
    const dx = new DxClient({ baseUrl: 'http://svc', accessToken: 't', fetch: session.fetch });
    const progress: UploadProgress[] = [];
    const done = await dx.upload(
      'd',
      { data },
      { resumable: true, chunkSize: 64, onProgress: (p) => progress.push(p) },
    );
    assert.deepEqual(done, {
      datasetId: 'd',
      jobId: 'j',
      bytes: data.length,
      url: 'http://svc/uploads/j?expires=1&signature=s',
    });
    assert.deepEqual(Uint8Array.from(session.stored), data);
    assert.equal(progress.at(-1)?.bytesSent, data.length);
  });

  it('resumes a stream of unknown size, and takes a lost last answer as done', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `{"id":${i}}\n`);
    async function* stream() {
      for (const l of lines) yield new TextEncoder().encode(l);
    }
    const session = fakeSession(new Set([2]), true);
    const dx = new DxClient({ baseUrl: 'http://svc', accessToken: 't', fetch: session.fetch });
    const done = await dx.upload(
      'd',
      { stream: stream() },
      { resumable: true, chunkSize: 50, format: 'json' },
    );
    assert.equal(done.bytes, lines.join('').length);
    assert.equal(new TextDecoder().decode(Uint8Array.from(session.stored)), lines.join(''));
  });
});

describe('waiting for a job across a restart of the service', () => {
  const job = (status: string) => ({
    datasetJobId: 'job-1',
    currentStatus: {
      status,
      datasetJobStatusName: status === 'Failed' || status === 'Expired' ? 'UnknownError' : status,
      logData: status === 'Completed' ? { message: 'done', rowsLoaded: 3 } : null,
      errorData: null,
    },
    progress: null,
    rejectedRowsUrl: null,
  });
  const refused = () =>
    new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
  const problem = (status: number) =>
    json(status, { type: 'about:blank', title: 'Unavailable', status }, 'application/problem+json');

  /** A service that answers `script` in turn: a job status, a status code, or a refused connection. */
  function scripted(script: (string | number)[]) {
    let i = 0;
    const fetch: FetchLike = async () => {
      const step = script[Math.min(i++, script.length - 1)];
      if (step === 'refused') throw refused();
      if (typeof step === 'number') return problem(step);
      return json(200, job(step as string));
    };
    return { client: new DxClient({ baseUrl: 'http://dx.test', accessToken: 't', fetch }), reads: () => i };
  }

  it('reads again through refused connections and 502/503/504, telling once per outage', async () => {
    const s = scripted(['Running', 'refused', 503, 'refused', 'Running', 502, 504, 'Completed']);
    const outages: unknown[] = [];
    const result = await s.client.waitForJob('job-1', {
      initialIntervalMs: 1,
      maxIntervalMs: 1,
      unavailableMs: 60_000,
      onUnavailable: (err) => outages.push(err),
    });
    assert.equal(result.status, 'Completed');
    assert.equal(s.reads(), 8);
    assert.equal(outages.length, 2);
    assert.ok(outages[0] instanceof TypeError);
    assert.ok(outages[1] instanceof DxProblemError && outages[1].status === 502);
  });

  it('throws at once without unavailableMs, and past it; other problems are never read again', async () => {
    await assert.rejects(scripted(['refused', 'Completed']).client.waitForJob('job-1'), /fetch failed/);
    const long = scripted(['Running', 'refused']);
    const started = Date.now();
    await assert.rejects(
      long.client.waitForJob('job-1', { initialIntervalMs: 1, unavailableMs: 600 }),
      /fetch failed/,
    );
    assert.ok(Date.now() - started < 2000);
    assert.ok(long.reads() >= 3 && long.reads() <= 4, `${long.reads()} reads`);
    const missing = scripted([404, 'Completed']);
    await assert.rejects(missing.client.waitForJob('job-1', { unavailableMs: 60_000 }), DxProblemError);
    assert.equal(missing.reads(), 1);
  });
});
