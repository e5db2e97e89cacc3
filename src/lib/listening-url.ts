// The address a listener actually bound, as a URL and in words: the wildcard addresses stay what
// they are (not "localhost", which would hide that every interface is served).
import type { AddressInfo, Server } from 'node:net';

/** `http://HOST:PORT` of a listening server: IPv6 in brackets, 0.0.0.0 and :: as bound. */
export function listeningUrl(server: Server): string {
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Whether a listener's URL names a wildcard address, in words for a banner ('' otherwise). */
export function wildcardNote(url: string): string {
  const host = new URL(url).hostname;
  return host === '0.0.0.0' ? 'every IPv4 interface' : host === '[::]' ? 'every interface' : '';
}
