import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import { FetchRefused, safeFetch, shownUrl } from './safe-fetch.js';

describe('safeFetch', () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/file.csv') {
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.end('id\n1\n');
      } else if (url.pathname === '/to-ip') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/file.csv` });
        res.end();
      } else if (url.pathname === '/loop') {
        res.writeHead(302, { location: '/loop' });
        res.end();
      } else if (url.pathname === '/big') {
        res.writeHead(200);
        res.end('x'.repeat(5000));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const refused = async (url: string, allowlist: string[], pattern: RegExp, maxBytes = 1e6) => {
    await assert.rejects(
      async () => text((await safeFetch(url, { allowlist, maxBytes })).body),
      (err: unknown) => err instanceof FetchRefused && pattern.test(err.message),
    );
  };

  it('refuses loopback by IP and by name without an allowlist', async () => {
    await refused(`http://127.0.0.1:${port}/file.csv`, [], /loopback/);
    await refused(`http://localhost:${port}/file.csv`, [], /resolves to .* loopback/);
    await refused(`http://[::1]:${port}/file.csv`, [], /loopback/);
  });

  it('fetches from allowlisted CIDRs and host names', async () => {
    const byCidr = await safeFetch(`http://127.0.0.1:${port}/file.csv?sig=secret`, {
      allowlist: ['127.0.0.1/32'],
      maxBytes: 1e6,
    });
    assert.equal(await text(byCidr.body), 'id\n1\n');
    assert.equal(byCidr.contentType, 'text/csv');
    assert.equal(byCidr.shownUrl, `http://127.0.0.1:${port}/file.csv`);
    const byName = await safeFetch(`http://localhost:${port}/file.csv`, {
      allowlist: ['localhost'],
      maxBytes: 1e6,
    });
    assert.equal(await text(byName.body), 'id\n1\n');
  });

  it('checks every redirect hop', async () => {
    await refused(`http://localhost:${port}/to-ip`, ['localhost'], /127\.0\.0\.1 is refused/);
    await refused(`http://127.0.0.1:${port}/loop`, ['127.0.0.1/32'], /too many redirects/);
  });

  it('enforces the size limit, http(s) only, and reports HTTP errors', async () => {
    await refused(`http://127.0.0.1:${port}/big`, ['127.0.0.1/32'], /larger than the limit/, 100);
    await refused('ftp://example.com/a.csv', [], /only http/);
    await refused('file:///etc/passwd', [], /only http/);
    await refused(`http://127.0.0.1:${port}/missing`, ['127.0.0.1/32'], /HTTP 404/);
    await refused('http://169.254.169.254/latest/meta-data/', [], /link-local/);
    await refused('http://metadata.google.internal/', [], /metadata/);
  });

  it('never shows the query of a URL', () => {
    assert.equal(
      shownUrl('https://bucket.s3.amazonaws.com/a.csv?X-Amz-Signature=abc'),
      'https://bucket.s3.amazonaws.com/a.csv',
    );
  });
});
