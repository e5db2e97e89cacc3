import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../config.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

test('no SMTP_URL: no mail (reset links come from the operator)', () => {
  assert.equal(loadConfig({}).mail, null);
  assert.deepEqual(problemsOf({ MAIL_FROM: 'dx@example.org' }), [
    'MAIL_FROM: set, but SMTP_URL is not (set SMTP_URL to send mail)',
  ]);
});

test('SMTP_URL and MAIL_FROM together turn mail on', () => {
  const c = loadConfig({
    SMTP_URL: 'smtps://dx:pw@mail.example.org:465',
    MAIL_FROM: ' DX <dx@example.org> ',
  });
  assert.deepEqual(c.mail, { smtpUrl: 'smtps://dx:pw@mail.example.org:465', from: 'DX <dx@example.org>' });
  assert.equal(
    loadConfig({ SMTP_URL: 'smtp://127.0.0.1:25', MAIL_FROM: 'dx@example.org' }).mail?.from,
    'dx@example.org',
  );
});

test('a bad SMTP_URL or MAIL_FROM is named, and the SMTP password is not repeated', () => {
  const problems = problemsOf({ SMTP_URL: 'https://dx:hunter2hunter2@mail.example.org', MAIL_FROM: '' });
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.match(problems[0]!, /^SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
  assert.ok(!problems.join('\n').includes('hunter2'), problems.join('\n'));
  assert.match(problems[1]!, /^MAIL_FROM: required when SMTP_URL is set/);
  assert.match(
    problemsOf({ SMTP_URL: 'smtp://mail.example.org', MAIL_FROM: 'nobody\r\nBcc: x@example.org' })[0]!,
    /^MAIL_FROM: must be an address/,
  );
  assert.match(
    problemsOf({ SMTP_URL: 'smtp://mail.example.org', MAIL_FROM: 'not an address' })[0]!,
    /^MAIL_FROM/,
  );
});
