// Checks log lines that the service formats itself against the lines pino writes for the same
// facts (src/lib/batched-lines.ts): a child process writes its lines to a real stdout through the
// destination createLogger makes (the batched path), and pino's to stderr.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Runs the ES module `script` in a child: it writes its lines to stdout through the logger under
 * test and pino's lines for the same entries to stderr. Asserts both are `count` lines, equal but
 * for their time, and each led by pino's base fields; returns what stdout got.
 */
export async function linesAsPinoWrites(script: string, count: number): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    {
      maxBuffer: 16 * 2 ** 20,
    },
  );
  const withoutTime = (line: string) => line.replace(/"time":\d+,/, '');
  const got = stdout.trimEnd().split('\n');
  const want = stderr.trimEnd().split('\n');
  assert.equal(got.length, count);
  assert.deepEqual(got.map(withoutTime), want.map(withoutTime));
  for (const line of got) assert.match(line, /^\{"level":30,"time":\d{13},"pid":\d+,"hostname":/);
  return stdout;
}
