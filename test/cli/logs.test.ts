// Every role logs the same way: pino JSON lines on stdout with the same base fields, whichever
// roles a process runs, and no secret at any level; one access line per API request; job lines
// name the role and the request that created the job; banners name the address bound; each
// role's /metrics holds its own metrics only; proxy cluster workers' metrics add up.
import { it, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { get } from 'node:http';
import { promisify } from 'node:util';
import { forEachDatabase } from '../support/databases.js';
import { startFixture } from '../support/fixture.js';
import { freePort } from '../support/processes.js';
import { BANNERS, DX_BIN, serve, type Served } from '../support/served.js';

/** The fields every line of every role carries, and their types. */
const BASE_FIELDS = { level: 'number', time: 'number', pid: 'number', hostname: 'string', msg: 'string' };

/** Stops the process (it must exit 0) and returns every stdout line, parsed. */
async function stopped(served: Served): Promise<Record<string, unknown>[]> {
  try {
    assert.equal(await served.stop(), 0, served.stderr());
    return served.lines();
  } finally {
    served.cleanup();
  }
}

/** Asserts the base fields of every line and the role of the role's own lines; returns those. */
function linesOf(lines: Record<string, unknown>[], pid: number | undefined, role: string) {
  for (const line of lines) {
    for (const [field, type] of Object.entries(BASE_FIELDS)) {
      assert.equal(typeof line[field], type, `${field} in ${JSON.stringify(line)}`);
    }
    assert.equal(line.pid, pid);
  }
  const own = lines.filter((l) => l.role === role);
  assert.ok(own.length > 0, `no line of the ${role} role in ${JSON.stringify(lines)}`);
  return own;
}

test('a worker-only process logs pino JSON lines on stdout with the fields of the API', async () => {
  const api = serve('api');
  const worker = serve('worker');
  const apiUrl = await api.banner(BANNERS.api);
  await worker.banner(/roles worker;/);
  const secret = 'dxt_loggedNowhere0123456789';
  await fetch(`${apiUrl}/api/v1/datasets?sig=topsecretsignature`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  const [apiLines, workerLines] = await Promise.all([stopped(api), stopped(worker)]);

  const request = linesOf(apiLines, api.child.pid, 'api').find((l) => l.msg === 'api request');
  assert.ok(request !== undefined);
  const started = linesOf(workerLines, worker.child.pid, 'worker').find((l) => l.msg === 'worker started');
  assert.ok(started !== undefined);
  // The same shape: pino's numeric level, the same base fields, nothing on stderr but the banner.
  assert.equal(started.level, request.level);
  assert.deepEqual(Object.keys(started).slice(0, 5), Object.keys(request).slice(0, 5));
  assert.ok(!worker.stderr().includes('{'), `JSON on stderr: ${worker.stderr()}`);
  assert.ok(!api.stdout().includes(secret) && !api.stdout().includes('topsecretsignature'));
});

test('a proxy-only process logs its access lines with the same fields and no secrets', async () => {
  const proxy = serve('proxy', { env: { UPSTREAM_URL: 'http://127.0.0.1:9' } });
  const proxyUrl = await proxy.banner(/Proxy listening on (http:\/\/\S+) /);
  const authorization = `Basic ${Buffer.from('app:s3cr3t-key|1').toString('base64')}`;
  const res = await fetch(`${proxyUrl}/v4/people?lastName=Sensitive`, {
    headers: { authorization, 'x-proxyvid': 'pv_notAnActiveIdButSecret' },
  });
  assert.equal(res.status, 400);
  await res.arrayBuffer();
  const lines = await stopped(proxy);

  const access = linesOf(lines, proxy.child.pid, 'proxy').find((l) => l.msg === 'proxy request');
  assert.ok(access !== undefined, JSON.stringify(lines));
  assert.equal(access.path, '/v4/people?lastName');
  assert.equal(access.status, 400);
  const text = proxy.stdout();
  for (const secret of [authorization, 's3cr3t-key', 'pv_notAnActiveIdButSecret', 'Sensitive']) {
    assert.ok(!text.includes(secret), `the log contains ${secret}`);
  }
});

/** A GET on a connection of its own (so that cluster workers share the requests); the status. */
function getOnNewConnection(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    }).once('error', reject);
  });
}

test('the API serves the metrics of every proxy cluster worker, summed', async () => {
  const service = serve('api,proxy', { env: { UPSTREAM_URL: 'http://127.0.0.1:9', PROXY_WORKERS: '2' } });
  const proxyUrl = await service.banner(/Proxy listening on (http:\/\/\S+) /);
  const apiUrl = await service.banner(BANNERS.api);
  const statuses = await Promise.all(
    Array.from({ length: 10 }, () => getOnNewConnection(`${proxyUrl}/v4/echoes`, {})),
  );
  assert.deepEqual(
    statuses,
    Array.from({ length: 10 }, () => 401),
  );
  const metrics = await (await fetch(`${apiUrl}/metrics`)).text();
  const lines = await stopped(service);

  const servedBy = new Set(lines.filter((l) => l.msg === 'proxy request').map((l) => l.pid));
  assert.equal(servedBy.size, 2, 'both workers served requests');
  assert.match(metrics, /^dx_proxy_requests_total\{proxy_id="none",method="GET",status_class="4xx"\} 10$/m);
  assert.match(metrics, /^# TYPE dx_proxy_request_duration_seconds histogram$/m);
  assert.match(
    metrics,
    /^dx_proxy_request_duration_seconds_count\{proxy_id="none",method="GET",status_class="4xx"\} 10$/m,
  );
  assert.match(metrics, /^# TYPE dx_api_requests_total counter$/m);
});

await forEachDatabase('operator logs', (target) => {
  it('one access line per API request; job lines name the role and the request that created the job', async () => {
    // The in-process fixture onboards an app; the process under test serves the same data.
    const h = await startFixture(target, { ROLES: 'api' });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const served = serve('api,worker', {
      dataDir: h.processEnv.DATA_DIR,
      env: { ...h.processEnv, API_PORT: String(port), PUBLIC_URL: url, WORKER_POLL_MS: '50' },
    });
    try {
      assert.equal(await served.banner(BANNERS.api), url);
      const datasetId = await h.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
      const headers = { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' };
      const asked = await fetch(`${url}/api/v1/datasets/${datasetId}/uploadUrl`, {
        method: 'POST',
        headers: { ...headers, 'x-request-id': 'req-issue-34' },
        body: JSON.stringify({ contentType: 'csv' }),
      });
      assert.equal(asked.status, 202);
      const upload = (await asked.json()) as { url: string; jobId: string };
      const put = await fetch(upload.url, {
        method: 'PUT',
        headers: { 'content-type': 'text/csv', 'x-request-id': 'req-put' },
        body: 'id\n1\n2\n',
      });
      assert.equal(put.status, 200, await put.text());
      let status = '';
      for (let i = 0; i < 200 && status !== 'Completed' && status !== 'Failed'; i++) {
        const job = await fetch(`${url}/api/v1/datasets/jobs/${upload.jobId}`, { headers });
        status = ((await job.json()) as { currentStatus: { datasetJobStatusName: string } }).currentStatus
          .datasetJobStatusName;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(status, 'Completed');
      // Probes log nothing at the default level (their routes' own level is warn).
      assert.equal((await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'req-probe' } })).status, 200);
      const lines = await stopped(served);

      // One line per request, once the answer is out; not Fastify's incoming/completed pair.
      assert.deepEqual(
        lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed'),
        [],
      );
      const access = lines.filter((l) => l.msg === 'api request');
      for (const reqId of ['req-issue-34', 'req-put']) {
        assert.equal(access.filter((l) => l.reqId === reqId).length, 1, `one line for ${reqId}`);
      }
      assert.deepEqual(
        lines.filter((l) => l.reqId === 'req-probe'),
        [],
      );
      const asking = access.find((l) => l.reqId === 'req-issue-34');
      assert.deepEqual(
        { ...asking, time: 0, pid: 0, hostname: '', totalMs: 0, bytesOut: 0 },
        {
          level: 30,
          time: 0,
          pid: 0,
          hostname: '',
          role: 'api',
          reqId: 'req-issue-34',
          method: 'POST',
          path: `/api/v1/datasets/${datasetId}/uploadUrl`,
          route: '/api/v1/datasets/:id/uploadUrl',
          status: 202,
          bytesIn: Buffer.byteLength(JSON.stringify({ contentType: 'csv' })),
          bytesOut: 0,
          totalMs: 0,
          remoteAddress: '127.0.0.1',
          msg: 'api request',
        },
      );
      // The PUT's line keeps the path, not the signature.
      const putLine = access.find((l) => l.reqId === 'req-put');
      assert.equal(putLine?.path, `/uploads/${upload.jobId}?expires&signature`);

      // The job's lines: which role made each move, and the request that created the job.
      const jobLines = lines.filter((l) => l.component === 'jobs' && l.jobId === upload.jobId);
      assert.deepEqual(
        jobLines.map((l) => [l.event, l.role, l.requestId]),
        [
          ['job.created', 'api', 'req-issue-34'],
          ['job.queued', 'api', 'req-issue-34'],
          ['job.started', 'worker', 'req-issue-34'],
          ['job.completed', 'worker', 'req-issue-34'],
        ],
      );
      // Fastify's own "Server listening at" lines are gone: the banner names the address.
      assert.ok(!served.stdout().includes('Server listening at'), served.stdout());
    } finally {
      served.cleanup();
      await h.close();
    }
  });
});

test('banners name the address bound, and the first-app hint shows only while there is no app', async () => {
  const first = serve('api');
  try {
    const apiUrl = await first.banner(BANNERS.api);
    assert.match(apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/, 'the address bound, not localhost');
    assert.match(first.stderr(), /^Onboard a first app: /m);
    assert.match(first.stderr(), new RegExp(`^Admin on the API's port: ${apiUrl}/healthz`, 'm'));
    assert.equal(await first.stop(), 0);
    const run = promisify(execFile);
    await run(process.execPath, [DX_BIN, 'apps', 'create', '--name', 'First'], {
      env: { ...process.env, DATA_DIR: first.dataDir, LOG_LEVEL: 'silent' },
    });
    const again = serve('api', { dataDir: first.dataDir });
    try {
      await again.banner(BANNERS.api);
      assert.doesNotMatch(again.stderr(), /Onboard a first app/);
      assert.equal(await again.stop(), 0);
    } finally {
      again.cleanup();
    }
  } finally {
    first.cleanup();
  }
});

test("each role's /metrics holds that role's metrics only", async () => {
  const processes = {
    api: serve('api'),
    worker: serve('worker'),
    proxy: serve('proxy', { env: { UPSTREAM_URL: 'http://127.0.0.1:9' } }),
  };
  try {
    const scrape = async (p: Served, pattern: RegExp) =>
      (await fetch(`${await p.banner(pattern)}/metrics`)).text();
    const api = await scrape(processes.api, BANNERS.api);
    const worker = await scrape(processes.worker, BANNERS.admin);
    const proxy = await scrape(processes.proxy, BANNERS.admin);
    const families = (text: string) =>
      [...text.matchAll(/^# HELP (dx_\w+)/gm)].map((m) => m[1] as string).sort();
    assert.deepEqual(families(api), [
      'dx_api_kept_answers_total',
      'dx_api_request_duration_seconds',
      'dx_api_requests_total',
      'dx_job_duration_seconds',
      'dx_job_rows_loaded_total',
      'dx_jobs_finished_total',
    ]);
    // The gauges count every process's jobs: one role exports them, so a sum over processes
    // of different roles does not count them twice.
    assert.deepEqual(families(worker), [
      'dx_job_duration_seconds',
      'dx_job_rows_loaded_total',
      'dx_jobs_finished_total',
      'dx_jobs_queued',
      'dx_jobs_running',
      'dx_webhook_deliveries_total',
    ]);
    assert.deepEqual(families(proxy), [
      'dx_proxy_http_parser_processes',
      'dx_proxy_request_bytes_total',
      'dx_proxy_request_duration_seconds',
      'dx_proxy_requests_total',
      'dx_proxy_response_bytes_total',
      'dx_proxy_upstream_duration_seconds',
    ]);
    for (const p of Object.values(processes)) assert.equal(await p.stop(), 0);
  } finally {
    for (const p of Object.values(processes)) p.cleanup();
  }
});
