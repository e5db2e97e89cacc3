import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { problem } from '../errors.js';
import { logProblem } from './problems.js';

function recordingRequest() {
  const lines: { level: string; fields: Record<string, unknown> }[] = [];
  const log = {
    error: (fields: Record<string, unknown>) => lines.push({ level: 'error', fields }),
    warn: (fields: Record<string, unknown>) => lines.push({ level: 'warn', fields }),
  };
  return { request: { log } as unknown as FastifyRequest, lines };
}

test('a 500, and a 503 hiding a failure, are logged as errors with the error', () => {
  const { request, lines } = recordingRequest();
  const crash = new Error('boom');
  logProblem(request, crash, problem('internal', 'An unexpected error occurred.'), 'request failed');
  const down = problem('unavailable', 'The database does not answer.', { cause: new Error('ECONNREFUSED') });
  logProblem(request, down, down, 'request failed');
  assert.deepEqual(
    lines.map((l) => [l.level, l.fields.err]),
    [
      ['error', crash],
      ['error', down],
    ],
  );
});

test('a refusal decided on purpose is a warning with its code, and a 4xx is not logged', () => {
  const { request, lines } = recordingRequest();
  const full = problem('unavailable', 'This server is streaming as many downloads as it may; retry shortly.');
  logProblem(request, full, full, 'request failed');
  const missing = problem('notFound', 'No such dataset.');
  logProblem(request, missing, missing, 'request failed');
  assert.deepEqual(lines, [{ level: 'warn', fields: { code: full.code, detail: full.detail } }]);
});
