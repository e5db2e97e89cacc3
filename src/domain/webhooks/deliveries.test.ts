import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { backoffMs, BACKOFF_JITTER, jittered, MAX_BACKOFF_MS, signatureHeader } from './deliveries.js';

void it('waits base, 2×base, 4×base … between attempts, at most an hour', () => {
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => backoffMs(10_000, n)),
    [10_000, 20_000, 40_000, 80_000],
  );
  assert.equal(backoffMs(10_000, 40), MAX_BACKOFF_MS);
  // Some 29 attempts fit in the 24 hours with the default base.
  let t = 0;
  let n = 1;
  while (t + backoffMs(10_000, n) <= 24 * 3600_000) t += backoffMs(10_000, n++);
  assert.ok(n > 20 && n < 40, String(n));
});

void it('takes up to a fifth off each wait at random, never adding to it', () => {
  assert.equal(
    jittered(10_000, () => 0),
    10_000,
  );
  assert.equal(
    jittered(10_000, () => 0.5),
    10_000 * (1 - BACKOFF_JITTER / 2),
  );
  assert.equal(
    jittered(10_000, () => 0.999999),
    8_000,
  );
  const waits = new Set(Array.from({ length: 50 }, () => jittered(60_000)));
  assert.ok(waits.size > 1, 'the waits differ');
  for (const w of waits) assert.ok(w > 48_000 && w <= 60_000, String(w));
});

void it('signs the raw body as sha256=<hex HMAC-SHA256>', () => {
  const body = '{"event":"dataset.job.completed"}';
  assert.equal(
    signatureHeader('whsec_x', body),
    `sha256=${createHmac('sha256', 'whsec_x').update(body).digest('hex')}`,
  );
  assert.match(signatureHeader('k', ''), /^sha256=[0-9a-f]{64}$/);
});
