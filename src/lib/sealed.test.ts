import { it } from 'node:test';
import assert from 'node:assert/strict';
import { derivedKey, seal, unseal } from './sealed.js';

void it('seals and opens a secret; another key or an altered text is refused', () => {
  const key = derivedKey('a'.repeat(32), 'webhook secrets');
  const sealed = seal(key, 'whsec_abc');
  assert.ok(!sealed.includes('whsec_abc'));
  assert.equal(unseal(key, sealed), 'whsec_abc');
  assert.notEqual(seal(key, 'whsec_abc'), sealed, 'a fresh IV each time');
  assert.throws(() => unseal(derivedKey('b'.repeat(32), 'webhook secrets'), sealed));
  assert.throws(() => unseal(key, sealed.slice(0, -2) + 'AA'));
  assert.throws(() => unseal(key, 'plain'));
});
