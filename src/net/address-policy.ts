// Which network addresses records:load may reach. Internal ranges (loopback, private, link-local,
// CGNAT, unique-local, metadata) are refused so a caller cannot make the service probe the
// operator's network (SSRF), unless the operator allowlists a host name or a CIDR.
import { BlockList, isIP } from 'node:net';

/** Ranges no fetch may reach by default, with the reason shown in the job's error. */
const BLOCKED_V4: [string, number, string][] = [
  ['0.0.0.0', 8, '"this" network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local / cloud metadata'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const BLOCKED_V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];
/** Names that resolve to metadata services inside clouds; refused even before resolution. */
const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

const blocked = new Map<string, BlockList>();
for (const [net, prefix, why] of BLOCKED_V4) {
  const list = blocked.get(why) ?? new BlockList();
  list.addSubnet(net, prefix, 'ipv4');
  blocked.set(why, list);
}
for (const [net, prefix, why] of BLOCKED_V6) {
  const list = blocked.get(why) ?? new BlockList();
  list.addSubnet(net, prefix, 'ipv6');
  blocked.set(why, list);
}

/** The operator's exceptions: host names (exact, case-insensitive) and CIDRs. */
export interface Allowlist {
  hosts: Set<string>;
  nets: BlockList;
}

/** Why an allowlist entry is malformed, or null when it is fine (config validation uses it). */
export function allowlistEntryProblem(entry: string): string | null {
  if (entry.includes('/')) {
    const [net = '', prefix = ''] = entry.split('/');
    const family = isIP(net);
    const bits = Number(prefix);
    const max = family === 4 ? 32 : 128;
    if (family === 0 || !/^\d{1,3}$/.test(prefix) || bits > max) return `"${entry}" is not a valid CIDR`;
    return null;
  }
  if (isIP(entry) !== 0) return null;
  return /^[A-Za-z0-9.-]{1,253}$/.test(entry) ? null : `"${entry}" is neither a host name, an IP nor a CIDR`;
}

/** Builds the allowlist from validated entries. */
export function parseAllowlist(entries: readonly string[]): Allowlist {
  const hosts = new Set<string>();
  const nets = new BlockList();
  for (const entry of entries) {
    if (entry.includes('/')) {
      const [net = '', prefix = ''] = entry.split('/');
      nets.addSubnet(net, Number(prefix), isIP(net) === 6 ? 'ipv6' : 'ipv4');
    } else if (isIP(entry) !== 0) {
      nets.addAddress(entry, isIP(entry) === 6 ? 'ipv6' : 'ipv4');
    } else {
      hosts.add(entry.toLowerCase());
    }
  }
  return { hosts, nets };
}

/** The IPv4 address embedded in an IPv4-mapped, NAT64 or 6to4 IPv6 address, if any. */
export function embeddedIPv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1] !== undefined) return dotted[1];
  const expanded = expandIPv6(lower);
  if (expanded === null) return null;
  const hex = (i: number) => parseInt(expanded[i] ?? '0', 16);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (expanded.slice(0, 5).every((g) => g === '0000') && expanded[5] === 'ffff') return v4(hex(6), hex(7));
  if (expanded[0] === '0064' && expanded[1] === 'ff9b' && expanded.slice(2, 6).every((g) => g === '0000'))
    return v4(hex(6), hex(7));
  if (expanded[0] === '2002') return v4(hex(1), hex(2));
  return null;
}

function expandIPv6(address: string): string[] | null {
  if (isIP(address) !== 6 || address.includes('.')) return null;
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(fill).fill('0'), ...right].map((g) => g.padStart(4, '0'));
}

/** Why an IP address may not be fetched from, or null when it may. */
export function blockedReason(address: string, allow: Allowlist): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (allow.nets.check(address, type)) return null;
  const inner = family === 6 ? embeddedIPv4(address) : null;
  if (inner !== null) {
    if (allow.nets.check(inner, 'ipv4')) return null;
    const why = blockedReason(inner, { hosts: new Set(), nets: new BlockList() });
    if (why !== null) return why;
  }
  for (const [why, list] of blocked) if (list.check(address, type)) return why;
  return null;
}

/** True when the operator allowlisted this host name. */
export function hostAllowed(host: string, allow: Allowlist): boolean {
  return allow.hosts.has(host.toLowerCase().replace(/\.$/, ''));
}

/** Why a host name is refused before resolution (metadata names), or null. */
export function blockedHostName(host: string, allow: Allowlist): string | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (hostAllowed(name, allow)) return null;
  return METADATA_HOSTS.has(name) ? 'cloud metadata host' : null;
}
