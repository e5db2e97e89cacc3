import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl, withoutQueryValues } from './redact.js';

void describe('withoutQueryValues', () => {
  void it('keeps query keys and drops values', () => {
    assert.equal(withoutQueryValues('/v4/people'), '/v4/people');
    assert.equal(withoutQueryValues('/v4/people?'), '/v4/people');
    assert.equal(
      withoutQueryValues('/v4/people?firstName=Ada&lastName=L&flag'),
      '/v4/people?firstName&lastName&flag',
    );
    assert.equal(withoutQueryValues('/a?x=1&&y=2=3'), '/a?x&y');
    assert.equal(withoutQueryValues('/a?=1&b&c=&&'), '/a?&b&c');
    assert.equal(withoutQueryValues('/a?&&'), '/a?');
    assert.equal(withoutQueryValues('/a?b&c&d=1'), '/a?b&c&d');
    assert.equal(withoutQueryValues('/api/v1/downloads/7?sig=abc&exp=123'), '/api/v1/downloads/7?sig&exp');
  });
});

void describe('redactUrl', () => {
  void it('hides the password and keeps the rest', () => {
    assert.equal(redactUrl('postgres://dx:hunter2@db:5432/dx'), 'postgres://dx:***@db:5432/dx');
    assert.equal(redactUrl('postgres://dx@db/dx'), 'postgres://dx@db/dx');
    assert.equal(redactUrl('https://key:s3cret@minio.lan'), 'https://key:***@minio.lan/');
  });

  void it('returns text that is not a URL as given', () => {
    assert.equal(redactUrl('sqlite:/data/dx.sqlite'), 'sqlite:/data/dx.sqlite');
    assert.equal(redactUrl('not a url'), 'not a url');
  });
});
