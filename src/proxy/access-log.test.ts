import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linesAsPinoWrites } from '../../test/support/pino-lines.js';
import { jsonString } from '../lib/batched-lines.js';
import { ms, msText } from './access-log.js';

// Run in a child so the log writes to a real stdout through the destination createLogger makes
// (the batched path): 600 entries, more than two batches, then the flush of the remainder. Each
// entry is also given to a pino logger writing to memory, whose lines are the expected ones.
const BATCHED = `
import { Writable } from 'node:stream';
import { pino } from ${JSON.stringify(import.meta.resolve('pino'))};
import { createLogger, roleLogger } from ${JSON.stringify(new URL('../lib/logger.js', import.meta.url).href)};
import { AccessLog } from ${JSON.stringify(new URL('./access-log.js', import.meta.url).href)};
let expected = '';
const memory = new Writable({ write(chunk, _enc, done) { expected += chunk; done(); } });
const reference = roleLogger(pino({ level: 'info' }, memory), 'proxy');
const log = new AccessLog(roleLogger(createLogger('info'), 'proxy'));
for (let i = 0; i < 600; i++) {
  const e = { reqId: 'r-' + i, proxyId: i % 7 === 0 ? 'none' : 'pv_abcdefgh', method: i % 2 ? 'POST' : 'GET',
    path: i % 5 === 0 ? '/v4/caf\u00e9s?q&"x"' : '/v4/echoes?state', status: 200 + (i % 3) * 100,
    bytesIn: i * 3, bytesOut: i * 11, upstreamMs: i % 4 === 0 ? null : ms(i / 7), totalMs: ms(i / 3) };
  if (i % 9 === 0) e.error = 'client closed';
  log.write(e);
  reference.info(e, 'proxy request');
}
await log.flush();
process.stderr.write(expected);
function ms(v) { return Math.round(v * 1000) / 1000; }
`;

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

void describe('AccessLog', () => {
  void it('writes batched lines in order, each the line pino writes for the same entry', async () => {
    await linesAsPinoWrites(BATCHED, 600);
  });
});
