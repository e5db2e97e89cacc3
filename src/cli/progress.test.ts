import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describe as describeState,
  formatBytes,
  counted,
  formatCount,
  formatDuration,
  parseApiTimestamp,
  percent,
  ProgressDisplay,
  type ProgressState,
} from './progress.js';

/** A display writing into an array, on a clock the test moves. */
function harness(isTTY: boolean) {
  const written: string[] = [];
  let clock = 0;
  const display = new ProgressDisplay(
    { write: (t: string) => written.push(t), isTTY },
    { now: () => clock, plainEveryMs: 5000, redrawEveryMs: 200 },
  );
  return {
    written,
    display,
    at: (ms: number) => (clock = ms),
    text: () => written.join(''),
  };
}

const MiB = 1024 * 1024;

void describe('progress formatting', () => {
  void it('sizes, counts, durations and percentages', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(27 * MiB), '27.0 MiB');
    assert.equal(formatBytes(1.2 * 1024 * MiB), '1.20 GiB');
    assert.equal(formatCount(1234567), '1,234,567');
    assert.equal(counted(1, 'record'), '1 record');
    assert.equal(counted(0, 'record'), '0 records');
    assert.equal(counted(2500, 'duplicate'), '2,500 duplicates');
    assert.equal(formatDuration(0.2), '1s');
    assert.equal(formatDuration(42), '42s');
    assert.equal(formatDuration(185), '3m 05s');
    assert.equal(formatDuration(7440), '2h 04m');
    assert.equal(percent(0, 0), 100);
    assert.equal(percent(995, 1000), 99, 'not 100 until done');
    assert.equal(percent(1000, 1000), 100);
    assert.equal(parseApiTimestamp('2024-08-21T23:16:34.230069'), Date.UTC(2024, 7, 21, 23, 16, 34, 230));
  });

  void it('upload: percent, bytes, rate and time left', () => {
    const start = { key: 'upload', at: 0, bytes: 0, rows: 0 };
    const state: ProgressState = { phase: 'upload', bytes: 10 * MiB, total: 40 * MiB, at: 2000 };
    assert.equal(describeState(state, start), 'uploading 25% (10.0 MiB of 40.0 MiB, 5.0 MiB/s, 6s left)');
    // Too early to tell a rate: none is shown, nor a time left.
    assert.equal(describeState({ ...state, at: 100 }, start), 'uploading 25% (10.0 MiB of 40.0 MiB)');
  });

  void it('load: rows with their rate; the time left from the bytes read of the total', () => {
    const start = { key: 'load', at: 1000, bytes: 0, rows: 0 };
    const state: ProgressState = {
      phase: 'load',
      rows: 200_000,
      bytes: 25 * MiB,
      total: 100 * MiB,
      at: 11_000,
    };
    // 25 MiB in 10 s: 75 MiB more take 30 s.
    assert.equal(describeState(state, start), 'loading 25% (200,000 rows read, 20,000 rows/s, 30s left)');
    assert.equal(
      describeState({ ...state, total: null }, start),
      'loading: 200,000 rows read, 20,000 rows/s',
      'no percent nor time left without a total',
    );
    assert.equal(
      describeState({ ...state, bytes: 100 * MiB }, start),
      'loading 100% (200,000 rows read, 20,000 rows/s)',
    );
    assert.equal(
      describeState({ phase: 'load', rows: 0, bytes: 0, total: null, at: 1000 }, start),
      'loading: starting',
      'the worker has begun and read nothing yet (the size may still be unknown)',
    );
    assert.equal(
      describeState({ phase: 'waiting', status: 'Queued', at: 0 }, start),
      'waiting for a worker (Queued)',
    );
    assert.equal(
      describeState(
        { phase: 'unavailable', reason: 'nothing listens there (127.0.0.1:8080)', waitMs: 120_000, at: 0 },
        start,
      ),
      'the service does not answer: nothing listens there (127.0.0.1:8080); waiting up to 2m 00s for it',
    );
  });
});

void describe('progress display', () => {
  void it('not a terminal: plain lines at each tenth or every few seconds, never a carriage return', () => {
    const h = harness(false);
    const total = 100 * MiB;
    // 1000 updates 10 ms apart: the upload goes up in 10 s.
    for (let i = 1; i <= 1000; i++) {
      h.at(i * 10);
      h.display.show({ phase: 'upload', bytes: (total * i) / 1000, total, at: i * 10 });
    }
    h.display.show({ phase: 'waiting', status: 'Queued', at: 10_100 });
    h.at(20_000);
    // A slow load whose figures change at every poll: a line every 5 s (and at each tenth).
    for (let s = 0; s <= 60; s++) {
      h.at(20_000 + s * 1000);
      const bytes = Math.min(total, s * 1.5 * MiB);
      h.display.show({ phase: 'load', rows: s * 1000, bytes, total, at: 20_000 + s * 1000 });
    }
    h.display.show({ phase: 'load', rows: 66_000, bytes: total, total, at: 87_000 }, true);
    h.display.end();
    const text = h.text();
    assert.ok(!text.includes('\r'), text);
    assert.ok(!text.includes('\x1b'), text);
    const lines = text.split('\n').filter((l) => l !== '');
    const uploads = lines.filter((l) => l.startsWith('uploading'));
    assert.equal(uploads.length, 11, lines.join('\n')); // the first one, then each tenth
    assert.match(uploads.at(-1) ?? '', /^uploading 100% \(100\.0 MiB of 100\.0 MiB, 10\.0 MiB\/s\)$/);
    assert.ok(lines.includes('waiting for a worker (Queued)'));
    const loads = lines.filter((l) => l.startsWith('loading'));
    // 60 s of load: the first line, one per 5 s or tenth (at most 12 + 10), the final figures.
    assert.ok(loads.length >= 12 && loads.length <= 24, loads.join('\n'));
    assert.match(loads[1] ?? '', /rows\/s, .* left\)$/);
    assert.equal(loads.at(-1), 'loading 100% (66,000 rows read, 985 rows/s)');
  });

  void it('a terminal: one line redrawn in place, at most every 200 ms; each phase keeps its last line', () => {
    const h = harness(true);
    for (let i = 1; i <= 100; i++) {
      h.at(i * 10);
      h.display.show({ phase: 'upload', bytes: i, total: 100, at: i * 10 });
    }
    h.display.show({ phase: 'upload', bytes: 100, total: 100, at: 1000 }, true);
    h.display.show({ phase: 'load', rows: 3, bytes: 100, total: 100, at: 1500 }, true);
    h.display.end();
    const draws = h.written.filter((w) => w.startsWith('\r'));
    assert.ok(draws.length >= 5 && draws.length <= 8, JSON.stringify(h.written));
    assert.ok(draws.every((d) => d.endsWith('\x1b[K')));
    assert.equal(h.text().split('\n').length, 3, 'upload line, load line, then the end');
    const [upload, load] = h.text().split('\n');
    assert.match(upload ?? '', /\ruploading 100% [^\r]*$/);
    assert.equal(load, '\rloading 100% (3 rows read)\x1b[K');
  });
});
