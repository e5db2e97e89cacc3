import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkSignedUrl, signUrl } from './signed-url.js';

const secret = 's'.repeat(32);

describe('signed URLs', () => {
  const url = new URL(signUrl(secret, 'http://h', 'PUT', '/uploads/j1', 2000));
  const query = Object.fromEntries(url.searchParams);

  it('accepts the URL it signed until it expires', () => {
    assert.equal(url.pathname, '/uploads/j1');
    assert.equal(checkSignedUrl(secret, 'PUT', '/uploads/j1', query, 1999), 'valid');
    assert.equal(checkSignedUrl(secret, 'PUT', '/uploads/j1', query, 2001), 'expired');
  });

  it('refuses other paths, methods, expiries, secrets and missing parts', () => {
    assert.equal(checkSignedUrl(secret, 'PUT', '/uploads/j2', query, 1), 'invalid');
    assert.equal(checkSignedUrl(secret, 'GET', '/uploads/j1', query, 1), 'invalid');
    assert.equal(checkSignedUrl(secret, 'PUT', '/uploads/j1', { ...query, expires: '3000' }, 1), 'invalid');
    assert.equal(checkSignedUrl('t'.repeat(32), 'PUT', '/uploads/j1', query, 1), 'invalid');
    assert.equal(checkSignedUrl(secret, 'PUT', '/uploads/j1', { expires: '2000' }, 1), 'invalid');
    assert.equal(checkSignedUrl(secret, 'PUT', '/uploads/j1', {}, 1), 'invalid');
  });
});
