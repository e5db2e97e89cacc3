import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoggableTracestate, isSafeRequestId, isValidTraceparent } from './request-id.js';

void describe('isSafeRequestId', () => {
  void it('keeps 1–200 visible ASCII characters', () => {
    for (const id of ['a', 'req-42', 'order_"7"/x\\y', '~!{}', 'x'.repeat(200), '0f3e-1a2b:9']) {
      assert.equal(isSafeRequestId(id), true, id);
    }
  });
  void it('refuses empty, long, spaced, control and non-ASCII values', () => {
    for (const id of ['', 'x'.repeat(201), 'has space', 'tab\there', 'cr\rlf\n', 'nul\0', 'é', 'del\x7f']) {
      assert.equal(isSafeRequestId(id), false, JSON.stringify(id));
    }
  });
});

void describe('isValidTraceparent', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  void it('accepts version 00 exactly and later versions by their first four fields', () => {
    assert.equal(isValidTraceparent(valid), true);
    assert.equal(isValidTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), true);
    assert.equal(
      isValidTraceparent('cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future'),
      true,
    );
  });
  void it('refuses malformed values, version ff, all-zero ids and extra fields on version 00', () => {
    for (const v of [
      '',
      valid.toUpperCase(),
      `${valid}-extra`,
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      '00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01',
      'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x',
    ]) {
      assert.equal(isValidTraceparent(v), false, v);
    }
  });
});

void describe('isLoggableTracestate', () => {
  void it('logs printable ASCII up to 512 characters', () => {
    assert.equal(isLoggableTracestate('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'), true);
    assert.equal(isLoggableTracestate('a'.repeat(513)), false);
    assert.equal(isLoggableTracestate('a=\nb'), false);
    assert.equal(isLoggableTracestate(''), false);
  });
});
