// The embedded store's signed download links: only exports can be named, whatever was signed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { problemOf } from '../support/onboarding.js';
import { signUrl } from '../../src/lib/signed-url.js';
import { nowSeconds } from '../../src/lib/time.js';

const SECRET = 'download-test-secret-0123456789abcdef';

await onDatabase('sqlite', 'downloads', (target) => {
  let t: Fixture;
  before(async () => {
    t = await startFixture(target, { SIGNING_SECRET: SECRET });
  });
  after(() => t.close());

  /** A request for a link signed over the decoded path, as the route checks it. */
  const signed = (datasetId: string, file: string) => {
    const url = signUrl(SECRET, '', 'GET', `/downloads/${datasetId}/${file}`, nowSeconds() + 60);
    return `/downloads/${encodeURIComponent(datasetId)}/${file}${url.slice(url.indexOf('?'))}`;
  };

  test('a signed link whose dataset id climbs out of the store is 404, never a 500', async () => {
    for (const datasetId of ['..', '../../signing-secret', '../..', 'x..y', '.']) {
      const res = await t.app.inject(signed(datasetId, '1.csv'));
      assert.equal(res.statusCode, 404, `${datasetId}: ${res.body}`);
      assert.equal(problemOf(res).status, 404);
    }
  });

  test('a signed link to an export that does not exist is 404; an unsigned one 403', async () => {
    const missing = await t.app.inject(signed('0b8a6e0e-2f6c-4d7e-9a53-000000000000', '3.csv'));
    assert.equal(missing.statusCode, 404);
    const unsigned = await t.app.inject('/downloads/0b8a6e0e-2f6c-4d7e-9a53-000000000000/3.csv');
    assert.equal(unsigned.statusCode, 403);
  });
});
