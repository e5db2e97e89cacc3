import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonString, ms, msText } from './access-log.js';

void describe('jsonString', () => {
  void it('writes every string exactly as JSON.stringify does', () => {
    const samples = [
      '',
      'GET',
      '/v4/echoes?state=&limit=',
      'a"b',
      'a\\b',
      'tab\there',
      'é',
      '\u2028',
      '\ud800',
      '😀',
    ];
    for (let c = 0; c < 0x100; c++) samples.push(`x${String.fromCharCode(c)}y`);
    for (const s of samples) assert.equal(jsonString(s), JSON.stringify(s), JSON.stringify(s));
  });
});

void describe('msText', () => {
  void it('writes milliseconds as String() does', () => {
    const values = [
      0,
      0.001,
      0.01,
      0.1,
      1,
      1.5,
      12.34,
      12.345,
      99.999,
      1000,
      300000.001,
      1e9,
      3e9,
      NaN,
      -1,
      0.0005,
      1 / 3,
    ];
    for (let us = 0; us < 200_000; us += 7) values.push(ms(us / 1000));
    for (let k = 0; k < 10_000; k++) values.push(ms(Math.random() * 2_000_000));
    for (const v of values) assert.equal(msText(v), String(v), String(v));
  });
});
