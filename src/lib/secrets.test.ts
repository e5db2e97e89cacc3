import { it } from 'node:test';
import assert from 'node:assert/strict';
import { deriveKey, seal, unseal } from './secrets.js';

void it('seals and opens a secret; another key, another context or an altered text is refused', () => {
  const key = deriveKey('a'.repeat(32), 'dx/test/v1');
  const sealed = seal(key, 'whsec_abc', 'app:1');
  assert.ok(!sealed.includes('whsec_abc'));
  assert.equal(unseal(key, sealed, 'app:1'), 'whsec_abc');
  assert.notEqual(seal(key, 'whsec_abc', 'app:1'), sealed, 'a fresh IV each time');
  assert.equal(unseal(deriveKey('b'.repeat(32), 'dx/test/v1'), sealed, 'app:1'), null);
  assert.equal(
    unseal(deriveKey('a'.repeat(32), 'dx/other/v1'), sealed, 'app:1'),
    null,
    'keys differ by purpose',
  );
  assert.equal(unseal(key, sealed, 'app:2'), null, 'bound to its context');
  assert.equal(unseal(key, sealed.slice(0, -2) + 'AA', 'app:1'), null);
  assert.equal(unseal(key, 'plain', 'app:1'), null);
});
