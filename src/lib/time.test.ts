import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMicros, formatMicrosExactly, formatSeconds } from './time.js';

test('formatMicros writes six fractional digits, at second boundaries and from one second to another', () => {
  assert.equal(formatMicros(0n), '1970-01-01T00:00:00.000000');
  assert.equal(formatMicros(999_999n), '1970-01-01T00:00:00.999999');
  assert.equal(formatMicros(1_000_000n), '1970-01-01T00:00:01.000000');
  assert.equal(formatMicros(1_724_282_194_230_069n), '2024-08-21T23:16:34.230069');
  // Alternating seconds: the kept second must not leak into the other one.
  assert.equal(formatMicros(1_724_282_195_000_001n), '2024-08-21T23:16:35.000001');
  assert.equal(formatMicros(1_724_282_194_999_999n), '2024-08-21T23:16:34.999999');
  assert.equal(formatSeconds(1_724_282_195), '2024-08-21T23:16:35.000000');
});

test('formatMicros agrees with BigInt arithmetic, beyond the exact range of a double too', () => {
  assert.equal(formatMicros(253_402_300_799_999_999n), '9999-12-31T23:59:59.999999');
  let seed = 12345;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
  for (let i = 0; i < 20_000; i++) {
    const micros =
      BigInt(next()) * 1_000_000n + BigInt(next() % 1_000_000) + (i % 2 === 0 ? 1_700_000_000_000_000n : 0n);
    assert.equal(formatMicros(micros), formatMicrosExactly(micros), String(micros));
  }
});
