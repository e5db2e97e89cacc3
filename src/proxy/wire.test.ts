import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionLines, statusLine } from './wire.js';

void describe('wire format pieces', () => {
  void it('statusLine keeps the last line but never answers a different status or reason with it', () => {
    assert.equal(statusLine(200, 'OK'), 'HTTP/1.1 200 OK\r\n');
    assert.equal(statusLine(200, 'OK'), 'HTTP/1.1 200 OK\r\n');
    assert.equal(statusLine(200, 'Fine'), 'HTTP/1.1 200 Fine\r\n');
    assert.equal(statusLine(201, 'Fine'), 'HTTP/1.1 201 Fine\r\n');
    assert.equal(statusLine(404, ''), 'HTTP/1.1 404 Not Found\r\n', "node's phrase for an empty reason");
    assert.equal(statusLine(404, undefined), 'HTTP/1.1 404 Not Found\r\n');
    assert.equal(statusLine(404, 'Gone Away'), 'HTTP/1.1 404 Gone Away\r\n');
    assert.equal(statusLine(200, 'OK'), 'HTTP/1.1 200 OK\r\n');
  });

  void it('connectionLines follows the keep-alive timeout it is given', () => {
    assert.equal(connectionLines(true, 65), 'Connection: keep-alive\r\nKeep-Alive: timeout=65\r\n');
    assert.equal(connectionLines(true, 5), 'Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n');
    assert.equal(connectionLines(false, 5), 'Connection: close\r\n');
    assert.equal(connectionLines(true, 65), 'Connection: keep-alive\r\nKeep-Alive: timeout=65\r\n');
  });
});
