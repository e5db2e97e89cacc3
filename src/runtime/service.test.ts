import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, DEFAULT_ADMIN_PORT, loadConfig } from '../config.js';
import { adminPlacement } from './service.js';

const up = { UPSTREAM_URL: 'http://up.example' };

test('ADMIN_PORT unset: the API port when the API runs here, else the default admin port', () => {
  assert.deepEqual(adminPlacement(loadConfig({ ROLES: 'api' })), { onApi: true });
  assert.deepEqual(adminPlacement(loadConfig({ ROLES: 'api,worker,proxy', ...up })), { onApi: true });
  for (const roles of ['worker', 'proxy', 'worker,proxy']) {
    assert.deepEqual(adminPlacement(loadConfig({ ROLES: roles, ...up })), {
      onApi: false,
      port: DEFAULT_ADMIN_PORT,
    });
  }
  assert.equal(DEFAULT_ADMIN_PORT, 9464);
});

test('ADMIN_PORT of its own gets its own listener on ADMIN_HOST (default HOST); equal to API_PORT, the API serves it', () => {
  const own = loadConfig({ ROLES: 'api', ADMIN_PORT: '9100', HOST: '10.0.0.5' });
  assert.deepEqual(adminPlacement(own), { onApi: false, port: 9100 });
  assert.equal(own.admin.host, '10.0.0.5');
  assert.equal(loadConfig({ ADMIN_PORT: '9100', ADMIN_HOST: '127.0.0.1' }).admin.host, '127.0.0.1');
  assert.deepEqual(adminPlacement(loadConfig({ ROLES: 'api', ADMIN_PORT: '8080' })), { onApi: true });
  // 0 asks for a free port of its own, even beside API_PORT=0.
  assert.deepEqual(adminPlacement(loadConfig({ ROLES: 'api', API_PORT: '0', ADMIN_PORT: '0' })), {
    onApi: false,
    port: 0,
  });
  assert.deepEqual(adminPlacement(loadConfig({ ROLES: 'worker', ADMIN_PORT: '9200' })), {
    onApi: false,
    port: 9200,
  });
});

test('a bad ADMIN_PORT is a configuration mistake', () => {
  assert.throws(
    () => loadConfig({ ADMIN_PORT: '-1' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.problems.join('\n'), /ADMIN_PORT: must be between 0 and 65535/);
      return true;
    },
  );
});
