import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowlistEntryProblem,
  blockedHostName,
  blockedReason,
  embeddedIPv4,
  parseAllowlist,
} from './address-policy.js';

const none = parseAllowlist([]);

describe('address policy', () => {
  it('refuses internal IPv4 ranges', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.254',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
    ]) {
      assert.notEqual(blockedReason(ip, none), null, ip);
    }
  });

  it('allows public IPv4 addresses next to the ranges', () => {
    for (const ip of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '11.0.0.1', '192.169.0.1', '1.1.1.1']) {
      assert.equal(blockedReason(ip, none), null, ip);
    }
  });

  it('refuses internal IPv6 ranges and IPv4 hidden in IPv6', () => {
    for (const ip of [
      '::1',
      '::',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a00:1',
      '2002:a00:1::',
    ]) {
      assert.notEqual(blockedReason(ip, none), null, ip);
    }
    assert.equal(blockedReason('2606:4700::1111', none), null);
    assert.equal(blockedReason('::ffff:8.8.8.8', none), null);
  });

  it('extracts embedded IPv4 addresses', () => {
    assert.equal(embeddedIPv4('::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(embeddedIPv4('::ffff:a00:1'), '10.0.0.1');
    assert.equal(embeddedIPv4('2002:c0a8:101::1'), '192.168.1.1');
    assert.equal(embeddedIPv4('2001:db8::1'), null);
  });

  it('lets the operator allow CIDRs, addresses and host names', () => {
    const allow = parseAllowlist(['127.0.0.1/32', '10.0.0.0/8', 'fd00::/8', 'files.internal', '192.168.5.5']);
    assert.equal(blockedReason('127.0.0.1', allow), null);
    assert.notEqual(blockedReason('127.0.0.2', allow), null);
    assert.equal(blockedReason('10.9.9.9', allow), null);
    assert.equal(blockedReason('fd00::5', allow), null);
    assert.equal(blockedReason('192.168.5.5', allow), null);
    assert.equal(blockedReason('::ffff:127.0.0.1', allow), null);
    assert.ok(allow.hosts.has('files.internal'));
  });

  it('refuses metadata host names unless allowed', () => {
    assert.notEqual(blockedHostName('metadata.google.internal', none), null);
    assert.notEqual(blockedHostName('METADATA.google.internal.', none), null);
    assert.equal(blockedHostName('example.com', none), null);
    assert.equal(blockedHostName('metadata', parseAllowlist(['metadata'])), null);
  });

  it('validates allowlist entries', () => {
    assert.equal(allowlistEntryProblem('127.0.0.1/32'), null);
    assert.equal(allowlistEntryProblem('::1/128'), null);
    assert.equal(allowlistEntryProblem('localhost'), null);
    assert.match(allowlistEntryProblem('10.0.0.0/33') ?? '', /CIDR/);
    assert.match(allowlistEntryProblem('bad host!') ?? '', /neither/);
  });
});
