import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatUptime } from './operator.js';

void it('names the uptime to the unit that matters', () => {
  assert.equal(formatUptime(42.9), '42 s');
  assert.equal(formatUptime(125), '2 min');
  assert.equal(formatUptime(2 * 3600 + 5 * 60 + 59), '2 h 5 min');
  assert.equal(formatUptime(3 * 86_400 + 4 * 3600 + 59 * 60), '3 d 4 h');
});
