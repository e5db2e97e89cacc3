// Every role logs the same way: pino JSON lines on stdout with the same base fields, whichever
// roles a process runs, and no secret at any level; proxy cluster workers' metrics add up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { BANNERS, serve, type Served } from '../support/served.js';

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

  const request = linesOf(apiLines, api.child.pid, 'api').find((l) => l.msg === 'incoming request');
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
