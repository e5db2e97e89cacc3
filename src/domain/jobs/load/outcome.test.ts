import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completedMessage } from './outcome.js';

const result = {
  rowsWritten: 4,
  rowsLoaded: 4,
  duplicatesCollapsed: 0,
  rowsCopied: 0,
  rowsReplaced: 0,
  rowsDeleted: 0,
};

test('the message counts the records left out in the right number', () => {
  const one = completedMessage('replace', result, 1, { dryRun: false, maxBadRecords: 1 });
  assert.equal(one, 'Loaded 4 records. 1 record with defects was left out (maxBadRecords=1).');
  const two = completedMessage('replace', result, 2, { dryRun: false, maxBadRecords: 2 });
  assert.equal(two, 'Loaded 4 records. 2 records with defects were left out (maxBadRecords=2).');
  const dry = completedMessage('replace', result, 1, { dryRun: true, maxBadRecords: 1 });
  assert.match(dry, /1 record with defects would be left out/);
});
