import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonString } from './access-log.js';

void describe('jsonString', () => {
  void it('writes every string exactly as JSON.stringify does', () => {
    const samples = ['', 'GET', '/v4/echoes?state=&limit=', 'a"b', 'a\\b', 'tab\there', 'é', '\u2028', '\ud800', '😀'];
    for (let c = 0; c < 0x100; c++) samples.push(`x${String.fromCharCode(c)}y`);
    for (const s of samples) assert.equal(jsonString(s), JSON.stringify(s), JSON.stringify(s));
  });
});
