import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cellValue, fileSize, visibility } from './pages-datasets.js';
import { html } from './html.js';
import { appIdFields } from '../../../domain/identity/app-id.js';

const tag = (appId: string, name: string) => ({
  datasetTagId: `t-${appId}`,
  name,
  datasetId: 'd',
  ...appIdFields(appId),
});
const app = (appId: string, appName: string) => ({ appName, ...appIdFields(appId) });

test('a dataset is seen by the tagged apps that are connected; the others are named apart', () => {
  const v = visibility([tag('a', 'Canvass'), tag('b', 'Old app')], [app('a', 'Canvass'), app('c', 'Survey')]);
  assert.deepEqual(
    v.canSee.map((t) => t.name),
    ['Canvass'],
  );
  assert.deepEqual(
    v.notConnected.map((t) => t.name),
    ['Old app'],
  );
});

test('a cell shows a short value whole, nothing for null, and cuts a long one at a character', () => {
  assert.equal(cellValue(null), '');
  assert.equal(cellValue(12), '12');
  assert.equal(cellValue(false), 'false');
  assert.equal(cellValue('<b>'), '<b>', 'escaped by the template, not here');
  // 119 letters then emoji (2 UTF-16 units each): the cut keeps whole code points.
  const long = `${'a'.repeat(119)}${'😀'.repeat(10)}`;
  const out = html`${cellValue(long)}`.value;
  assert.ok(out.startsWith(`${'a'.repeat(119)}😀…`), out);
  assert.match(out, /\(129 characters;/);
  assert.ok(!out.includes('\uFFFD'));
  assert.equal(html`${cellValue('<x>'.repeat(50))}`.value.slice(0, 9), '&lt;x&gt;');
});

test('a file size reads as people read it: bytes below a kilobyte, one decimal above', () => {
  assert.equal(fileSize(0), '0 bytes');
  assert.equal(fileSize(999), '999 bytes');
  assert.equal(fileSize(1000), '1.0 kB');
  assert.equal(fileSize(12_716_712), '12.7 MB');
  assert.equal(fileSize(935_936_733), '935.9 MB');
  assert.equal(fileSize(2_500_000_000), '2.5 GB');
});
