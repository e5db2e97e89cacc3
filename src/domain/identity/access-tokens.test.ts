import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessTokenKey } from './access-tokens.js';
import { hashSecret } from '../../lib/secrets.js';

test('a timed token is keyed by its mint time, then its hash, so keys grow as tokens are minted', () => {
  const earlier = `dxt_0193a1b2c3d4${'A'.repeat(43)}`;
  const later = `dxt_0193a1b2c3d5${'z'.repeat(43)}`;
  assert.equal(accessTokenKey(earlier), `0193a1b2c3d4${hashSecret(earlier)}`);
  assert.ok(accessTokenKey(earlier) < accessTokenKey(later));
});

test('a token of the earlier shape, or one whose head is not hex, is keyed by its plain hash', () => {
  const old = `dxt_${'Q'.repeat(43)}`;
  assert.equal(accessTokenKey(old), hashSecret(old));
  const notHex = `dxt_0193a1b2c3dZ${'A'.repeat(43)}`;
  assert.equal(accessTokenKey(notHex), hashSecret(notHex));
});
