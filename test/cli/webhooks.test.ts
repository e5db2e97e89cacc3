// `dx apps webhook set|show|remove`: the operator sets an app's webhook as the app would with its
// JWT, under the same address policy (WEBHOOK_URL_ALLOWLIST), the secret shown once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp } from '../support/onboarding.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');

await forEachDatabase('dx apps webhook', (target) => {
  let service: Fixture;
  let env: NodeJS.ProcessEnv;
  const dx = (extra: NodeJS.ProcessEnv, ...args: string[]) =>
    run(process.execPath, [BIN, ...args], { env: { ...env, ...extra } });

  before(async () => {
    service = await startFixture(target, { ROLES: 'api', WEBHOOK_URL_ALLOWLIST: '127.0.0.1' });
    env = { ...process.env, ...service.processEnv, LOG_LEVEL: 'silent' };
  });
  after(() => service.close());

  test('sets, shows and removes a webhook; loopback needs the allowlist', async () => {
    const partner = await onboardApp(service, 'CLI hook app', 'ES256');
    const appId = partner.app.id;
    const url = 'http://127.0.0.1:9/hook';
    await assert.rejects(
      dx({}, 'apps', 'webhook', 'set', appId, url),
      (err: { stderr: string; code: number }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /loopback/);
        return true;
      },
    );
    const set = await dx(
      { WEBHOOK_URL_ALLOWLIST: '127.0.0.1' },
      'apps',
      'webhook',
      'set',
      appId,
      url,
      '--json',
    );
    const hook = JSON.parse(set.stdout) as { url: string; secret: string; events: string[] };
    assert.equal(hook.url, url);
    assert.match(hook.secret, /^whsec_/);
    const shown = await dx({}, 'apps', 'webhook', 'show', appId, '--json');
    assert.equal((JSON.parse(shown.stdout) as { url: string }).url, url);
    assert.ok(!shown.stdout.includes(hook.secret));
    // The app sees what the operator set.
    const res = await service.app.inject({
      method: 'GET',
      url: '/api/v1/apps/me/webhook',
      headers: { authorization: `Bearer ${await partner.jwt()}` },
    });
    assert.equal(res.json<{ url: string }>().url, url);
    // --events chooses what is delivered; a name that is not an event is refused.
    const chosen = await dx(
      { WEBHOOK_URL_ALLOWLIST: '127.0.0.1' },
      'apps',
      'webhook',
      'set',
      appId,
      url,
      '--events',
      'dataset.job.failed, dataset.job.expired',
      '--json',
    );
    assert.deepEqual((JSON.parse(chosen.stdout) as { events: string[] }).events, [
      'dataset.job.failed',
      'dataset.job.expired',
    ]);
    await assert.rejects(
      dx({}, 'apps', 'webhook', 'set', appId, url, '--events', 'job.done'),
      /unknown: job\.done/,
    );
    await dx({}, 'apps', 'webhook', 'remove', appId);
    await assert.rejects(dx({}, 'apps', 'webhook', 'show', appId), /no webhook/);
  });
});
