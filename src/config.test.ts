import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { ConfigError, ENV_NAMES, loadConfig } from './config.js';

test('defaults: SQLite under ./data, API on 8080, roles api and worker', () => {
  const c = loadConfig({});
  assert.equal(c.apiPort, 8080);
  assert.equal(c.proxyPort, 8081);
  assert.equal(c.databaseUrl, `sqlite:${resolve('data', 'dx.sqlite')}`);
  assert.deepEqual(c.roles, ['api', 'worker']);
  assert.equal(c.publicUrl, 'http://localhost:8080');
  assert.equal(c.accessTokenTtlSeconds, 3600);
});

test('UPSTREAM_URL adds the proxy role; flags override the environment', () => {
  const c = loadConfig({ UPSTREAM_URL: 'http://up.example:9000', API_PORT: '1' }, { API_PORT: '9999' });
  assert.deepEqual(c.roles, ['api', 'worker', 'proxy']);
  assert.equal(c.apiPort, 9999);
});

test('every mistake is reported at once, one message each', () => {
  try {
    loadConfig({
      API_PORT: 'eighty',
      LOG_LEVEL: 'loud',
      ROLES: 'api,cook',
      DATABASE_URL: 'mysql://x',
      SIGNING_SECRET: 'short',
      PUBLIC_URL: 'ftp://x',
    });
    assert.fail('expected a ConfigError');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    const text = err.problems.join('\n');
    for (const name of ['API_PORT', 'LOG_LEVEL', 'ROLES', 'DATABASE_URL', 'SIGNING_SECRET', 'PUBLIC_URL']) {
      assert.match(text, new RegExp(`^${name}:`, 'm'), name);
    }
  }
});

test('PROXY_HTTP_PARSER: auto by default, builtin or wasm forced, nothing else', () => {
  assert.equal(loadConfig({}).proxy.httpParser, 'auto');
  assert.equal(loadConfig({ PROXY_HTTP_PARSER: 'wasm' }).proxy.httpParser, 'wasm');
  assert.equal(loadConfig({ PROXY_HTTP_PARSER: 'builtin' }).proxy.httpParser, 'builtin');
  assert.throws(
    () => loadConfig({ PROXY_HTTP_PARSER: 'native' }),
    /PROXY_HTTP_PARSER: must be one of auto, builtin, wasm/,
  );
});

test('the proxy role needs UPSTREAM_URL', () => {
  assert.throws(() => loadConfig({ ROLES: 'proxy' }), /UPSTREAM_URL: required/);
});

test('STORAGE=s3 reads the bucket settings; local is the default', () => {
  assert.deepEqual(loadConfig({}).storage, { kind: 'local' });
  const s3 = loadConfig({ STORAGE: 's3', S3_BUCKET: 'dx-uploads' }).storage;
  assert.equal(s3.kind === 's3' ? s3.s3.transfers : null, 'service');
  const c = loadConfig({
    STORAGE: 's3',
    S3_BUCKET: 'dx-uploads',
    S3_ENDPOINT: 'http://minio:9000/',
    S3_PUBLIC_ENDPOINT: 'https://files.example.org',
    S3_FORCE_PATH_STYLE: 'true',
    S3_TRANSFERS: 'direct',
    S3_NOTIFICATION_TOKEN: 'n'.repeat(32),
  });
  assert.deepEqual(c.storage, {
    kind: 's3',
    s3: {
      bucket: 'dx-uploads',
      region: 'us-east-1',
      endpoint: 'http://minio:9000',
      publicEndpoint: 'https://files.example.org',
      forcePathStyle: true,
      transfers: 'direct',
      notificationToken: 'n'.repeat(32),
      pollMs: 2000,
    },
  });
});

test('storage mistakes are reported one by one', () => {
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems;
    }
  };
  assert.match(problemsOf({ STORAGE: 's3' }).join('\n'), /^S3_BUCKET: required when STORAGE=s3$/m);
  assert.match(problemsOf({ STORAGE: 'gcs' }).join('\n'), /^STORAGE:/m);
  const many = problemsOf({
    STORAGE: 's3',
    S3_BUCKET: 'Bad_Bucket',
    S3_ENDPOINT: 'http://key:secret@minio:9000',
    S3_PUBLIC_ENDPOINT: 'ftp://files',
    S3_FORCE_PATH_STYLE: 'perhaps',
    S3_NOTIFICATION_TOKEN: 'short',
    S3_TRANSFERS: 'direct',
    S3_POLL_MS: '5',
  });
  for (const name of [
    'S3_BUCKET',
    'S3_ENDPOINT',
    'S3_PUBLIC_ENDPOINT',
    'S3_FORCE_PATH_STYLE',
    'S3_NOTIFICATION_TOKEN',
    'S3_POLL_MS',
  ]) {
    assert.equal(many.filter((p) => p.startsWith(`${name}:`)).length, 1, `${name} in ${many.join('; ')}`);
  }
  // The endpoint's credentials never appear in the message.
  assert.ok(!many.join('\n').includes('secret'));
  assert.match(problemsOf({ S3_BUCKET: 'dx' }).join('\n'), /^S3_BUCKET: set, but STORAGE is local/m);
  // Bucket notifications only matter when clients upload to the bucket directly.
  assert.match(
    problemsOf({ STORAGE: 's3', S3_BUCKET: 'dx', S3_NOTIFICATION_TOKEN: 'n'.repeat(32) }).join('\n'),
    /^S3_NOTIFICATION_TOKEN: only used with S3_TRANSFERS=direct/m,
  );
  assert.match(
    problemsOf({ STORAGE: 's3', S3_BUCKET: 'dx', S3_TRANSFERS: 'proxy' }).join('\n'),
    /^S3_TRANSFERS:/m,
  );
});

test('TRUST_PROXY: off by default; a hop count, or addresses, CIDRs and proxy-addr names', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1,loopback' }).trustProxy, [
    '10.0.0.0/8',
    '::1',
    'loopback',
  ]);
  for (const bad of ['0', '11', 'proxy.example', '10.0.0.0/33', '::1/129', '10.0.0.1/8/2', 'true']) {
    assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY: /, bad);
  }
});

test("the README's configuration table lists every variable the service reads", () => {
  const readme = readFileSync('README.md', 'utf8');
  const missing = ENV_NAMES.filter((name) => !readme.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
  assert.ok(ENV_NAMES.length > 40);
});

test('DATABASE_POOL_SIZE: 10 by default, 1 to 1000', () => {
  const pg = { DATABASE_URL: 'postgres://dx@db/dx' };
  assert.equal(loadConfig(pg).databasePoolSize, 10);
  // Whatever the roles: how it compares with the loads and downloads is checked when they start.
  assert.equal(loadConfig({ ...pg, DATABASE_POOL_SIZE: '1', WORKER_CONCURRENCY: '4' }).databasePoolSize, 1);
  assert.throws(
    () => loadConfig({ ...pg, DATABASE_POOL_SIZE: '0' }),
    /DATABASE_POOL_SIZE: must be between 1/,
  );
});

test('PROXY_RATE_SYNC_MS: 100 by default; 0 keeps the rate limit per process; else at least 10', () => {
  assert.equal(loadConfig({}).proxy.rateSyncMs, 100);
  assert.equal(loadConfig({ PROXY_RATE_SYNC_MS: '0' }).proxy.rateSyncMs, 0);
  assert.equal(loadConfig({ PROXY_RATE_SYNC_MS: '10' }).proxy.rateSyncMs, 10);
  assert.throws(
    () => loadConfig({ PROXY_RATE_SYNC_MS: '5' }),
    /PROXY_RATE_SYNC_MS: must be 0 \(per-process limit\) or at least 10/,
  );
  assert.throws(
    () => loadConfig({ PROXY_RATE_SYNC_MS: '-1' }),
    /PROXY_RATE_SYNC_MS: must be between 0 and 60000/,
  );
});
