import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:net';
import { listeningUrl, wildcardNote } from './listening-url.js';

const bound = (address: string, family: string, port = 8080) =>
  ({ address: () => ({ address, family, port }) }) as unknown as Server;

test('a listener is named by the address it bound, wildcards included', () => {
  assert.equal(listeningUrl(bound('0.0.0.0', 'IPv4')), 'http://0.0.0.0:8080');
  assert.equal(listeningUrl(bound('::', 'IPv6', 9464)), 'http://[::]:9464');
  assert.equal(listeningUrl(bound('127.0.0.1', 'IPv4', 1)), 'http://127.0.0.1:1');
  assert.equal(wildcardNote('http://0.0.0.0:8080'), 'every IPv4 interface');
  assert.equal(wildcardNote('http://[::]:8080'), 'every interface');
  assert.equal(wildcardNote('http://127.0.0.1:8080'), '');
});
