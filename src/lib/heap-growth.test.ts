import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HeapGrowthWhileRunning } from './heap-growth.js';

test('the growth limit is set while any task runs and cleared after the last, even when one fails', async () => {
  const calls: number[] = [];
  const gate = new HeapGrowthWhileRunning(50, (percent) => calls.push(percent));
  let releaseFirst = () => {};
  const first = gate.run(() => new Promise<string>((resolve) => (releaseFirst = () => resolve('first'))));
  const second = gate.run(() => Promise.reject(new Error('load failed')));
  await assert.rejects(second, /load failed/);
  assert.deepEqual(calls, [50], 'still set while the first task runs');
  releaseFirst();
  assert.equal(await first, 'first');
  assert.deepEqual(calls, [50, 0]);
  await gate.run(async () => assert.deepEqual(calls, [50, 0, 50]));
  assert.deepEqual(calls, [50, 0, 50, 0]);
});

test('the process gate sets the real V8 flag without throwing', async () => {
  const gate = new HeapGrowthWhileRunning();
  assert.equal(await gate.run(async () => 'ran'), 'ran');
});
