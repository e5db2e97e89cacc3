import { test } from 'node:test';
import assert from 'node:assert/strict';
import { html } from './html.js';
import { when } from './times.js';

test('an instant reads as UTC to the second, in a <time> that carries it for machines', () => {
  const stored = html`${when('2026-11-24T06:45:46.123456')}`.value;
  assert.equal(stored, '<time datetime="2026-11-24T06:45:46Z">2026-11-24 06:45:46 UTC</time>');
  assert.equal(html`${when(new Date('2026-11-24T06:45:46.9Z'))}`.value, stored);
  assert.equal(when(null), '');
});
