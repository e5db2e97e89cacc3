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
  // One bit of the ciphertext flipped. (Rewriting its last characters as text was not always a
  // change: the last base64url character carries unused bits, and one time in 256 the last byte
  // already was what the new characters encode.)
  const prefix = sealed.slice(0, sealed.indexOf(':') + 1);
  const raw = Buffer.from(sealed.slice(prefix.length), 'base64url');
  raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
  assert.equal(unseal(key, prefix + raw.toString('base64url'), 'app:1'), null);
  assert.equal(unseal(key, 'plain', 'app:1'), null);
});
