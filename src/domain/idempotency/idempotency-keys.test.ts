import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, isValidIdempotencyKey, requestFingerprint } from './idempotency-keys.js';

void describe('isValidIdempotencyKey', () => {
  void it('takes 1 to 255 visible ASCII characters', () => {
    assert.ok(isValidIdempotencyKey('a'));
    assert.ok(isValidIdempotencyKey('!~"#{}'));
    assert.ok(isValidIdempotencyKey('3f2b8c1e-7d4a-4e9b-9c0d-1a2b3c4d5e6f'));
    assert.ok(isValidIdempotencyKey('k'.repeat(255)));
  });

  void it('refuses empty, too long, spaces, controls and non-ASCII', () => {
    for (const bad of ['', 'k'.repeat(256), 'a b', 'a\tb', 'a\nb', 'a\u007fb', 'café', 'a, b']) {
      assert.equal(isValidIdempotencyKey(bad), false, JSON.stringify(bad));
    }
  });
});

void describe('canonicalJson', () => {
  void it('sorts object keys at every depth and keeps array order', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
    assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}');
    assert.equal(canonicalJson(['x', true, 1.5]), '["x",true,1.5]');
  });
});

void describe('requestFingerprint', () => {
  const base = {
    method: 'POST',
    route: '/api/v1/datasets/:id/records::load',
    params: { id: 'd1' },
    query: { mode: 'create' },
    body: { url: 'https://example.com/a.csv' },
  };

  void it('is the same for the same request written differently', () => {
    const same = {
      ...base,
      method: 'post',
      body: JSON.parse('{ "url" : "https://example.com/a.csv" }') as unknown,
    };
    assert.equal(requestFingerprint(same), requestFingerprint(base));
  });

  void it('differs when the method, route, parameters, query or body differ', () => {
    const variants = [
      { ...base, method: 'PUT' },
      { ...base, route: '/api/v1/datasets/:id/uploadUrl' },
      { ...base, params: { id: 'd2' } },
      { ...base, query: { mode: 'replace' } },
      { ...base, body: { url: 'https://example.com/b.csv' } },
      { ...base, body: null },
    ];
    const prints = new Set([base, ...variants].map(requestFingerprint));
    assert.equal(prints.size, variants.length + 1);
  });
});
