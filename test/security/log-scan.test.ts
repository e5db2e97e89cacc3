// The log at trace level holds no secret, in any encoding, on both engines: an app's JWT and
// private key, a workspace key, access tokens (good, revoked, wrong), signed upload and download
// URLs' signatures, a records:load URL's query and password, sent over HTTP in the ordinary way
// and in the ways that end in errors (a 431 for a huge header, a bad signature, a 401, a 404);
// and the console's invitation and password reset tokens, passwords, and the SMTP server's
// password (a reset link asked for by mail, read from a real SMTP server and used).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/lib/logger.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { putFile } from '../support/loading.js';
import { onboardApp, ownToken } from '../support/onboarding.js';
import { ConsoleBrowser, csrfOf } from '../support/console-browser.js';
import { resetLinkIn, startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { CLI_ACTOR } from '../../src/domain/console/audit.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { invitationLink, inviteOperator } from '../../src/domain/console/people.js';

/** The forms a secret could take in a log line: as is, JSON-escaped, base64, hex, a byte list. */
function encodings(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    bytes.toString('base64'),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    [...bytes.subarray(0, 24)].join(','),
  ].filter((form) => form.length >= 12);
}

await forEachDatabase('log scan for secrets at trace level', (target) => {
  let h: Fixture;
  let files: Server;
  let smtp: SmtpSink;
  let log = '';
  before(async () => {
    smtp = await startSmtpSink();
    files = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end('id\n1\n');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        log += chunk.toString('utf8');
        done();
      },
    });
    h = await startFixture(
      target,
      { LOAD_URL_ALLOWLIST: '127.0.0.1/32', LOG_LEVEL: 'trace', ...smtp.env },
      { logger: createLogger('trace', sink) },
    );
  });
  after(async () => {
    await h.close();
    await smtp.close();
    await new Promise((resolve) => files.close(resolve));
  });

  void it('no credential reaches the log in any encoding', { timeout: 120_000 }, async () => {
    const secrets: string[] = [];
    const partner = await onboardApp(h, 'Log scan app');
    const jwt = await partner.jwt();
    const token = await ownToken(h, partner);
    secrets.push(
      jwt,
      token,
      partner.workspaceKey,
      ...partner.privateKeyPem.split('\n').filter((l) => l.length > 40),
    );
    const call = (method: string, path: string, bearer: string, body?: unknown) =>
      fetch(`${h.baseUrl}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${bearer}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const waitForJob = async (jobId: string) => {
      for (let i = 0; i < 800; i++) {
        const res = await call('GET', `/datasets/jobs/${jobId}`, token);
        const status = ((await res.json()) as { currentStatus: { status: string } }).currentStatus.status;
        if (['Completed', 'Failed', 'Expired'].includes(status)) return status;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`job ${jobId} did not end`);
    };

    // Ordinary use: define, upload, load from a secret URL, export and download.
    const defined = await call('POST', '/datasets', token, {
      name: 'scan',
      schema: { properties: [{ name: 'id', type: 'integer' }], primaryKey: ['id'] },
    });
    assert.equal(defined.status, 201);
    const id = ((await defined.json()) as { datasetId: string }).datasetId;
    const requested = await call('POST', `/datasets/${id}/uploadUrl`, token, { contentType: 'csv' });
    assert.equal(requested.status, 202);
    const upload = (await requested.json()) as { url: string; jobId: string };
    const signature = new URL(upload.url).searchParams.get('signature') ?? '';
    secrets.push(signature);
    assert.equal((await putFile(upload.url, 'id\n1\n2\n')).status, 200);
    await waitForJob(upload.jobId);
    const port = (files.address() as AddressInfo).port;
    const loadSecret = 'X-Amz-Signature-v4-0123456789abcdef';
    const loadPassword = 'urlPassw0rdSecret';
    secrets.push(loadSecret, loadPassword);
    const load = await call('POST', `/datasets/${id}/records:load?mode=replace`, token, {
      url: `http://me:${loadPassword}@127.0.0.1:${port}/f.csv?X-Amz-Signature=${loadSecret}`,
    });
    const loadText = await load.text();
    assert.equal(load.status, 202, loadText);
    assert.equal(await waitForJob((JSON.parse(loadText) as { jobId: string }).jobId), 'Completed');
    const link = await call('POST', `/datasets/${id}/records:retrieve`, token, { contentType: 'csv' });
    const linkUrl = ((await link.json()) as { url: string }).url;
    secrets.push(new URL(linkUrl).searchParams.get('signature') ?? '');
    assert.equal((await fetch(linkUrl)).status, 200);

    // The ways that end in errors.
    const wrong = `dxt_${'W'.repeat(43)}`;
    secrets.push(wrong);
    assert.equal((await call('GET', '/datasets', wrong)).status, 401);
    assert.equal((await call('GET', '/datasets/nope', token)).status, 404);
    const bad = new URL(upload.url);
    bad.searchParams.set('signature', `${signature.slice(0, -4)}AAAA`);
    assert.equal((await fetch(bad, { method: 'PUT', body: 'x' })).status, 403);
    // A request whose header is too large: the parser refuses it (431) before any route.
    await new Promise<void>((resolve) => {
      const socket = connect(Number(new URL(h.baseUrl).port), '127.0.0.1', () => {
        socket.write(
          `GET /api/v1/datasets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`,
        );
      });
      socket.on('data', () => socket.end());
      socket.on('close', () => resolve());
      socket.on('error', () => resolve()); // the server may reset it once it answered
    });

    // The console: an invitation accepted, a reset link asked for by mail and used.
    const person = 'scan.person@example.org';
    const passwords = ['first passphrase of the scan', 'second passphrase of the scan'];
    const invitation = await inviteOperator(consoleDb(h.database.db), CLI_ACTOR, person);
    const b = new ConsoleBrowser(() => h.app);
    assert.equal(
      (await b.accept(invitationLink(h.baseUrl, invitation.token), 'Scan', passwords[0]!)).statusCode,
      303,
    );
    assert.equal(
      (await b.submit('/console/forgot-password', '/console/forgot-password', { email: person })).statusCode,
      200,
    );
    const resetUrl = new URL(resetLinkIn(await smtp.waitForMail(person)));
    const resetToken = resetUrl.searchParams.get('token') ?? '';
    const resetPage = await b.get(`${resetUrl.pathname}${resetUrl.search}`);
    const reset = await b.post('/console/reset-password', {
      _csrf: csrfOf(resetPage.body),
      token: resetToken,
      password: passwords[1]!,
      confirm: passwords[1]!,
    });
    assert.equal(reset.statusCode, 303);
    assert.equal((await b.signIn(person, passwords[1]!)).statusCode, 303);
    secrets.push(invitation.token, resetToken, smtp.password, ...passwords);

    await new Promise((r) => setTimeout(r, 200)); // the log's last lines

    assert.ok(log.includes('"level":10') || log.includes('"level":20'), 'trace and debug lines were written');
    const found = secrets
      .filter((s) => s.length >= 12)
      .flatMap((secret) =>
        encodings(secret)
          .filter((form) => log.includes(form))
          .map(() => secret.slice(0, 12)),
      );
    assert.deepEqual(found, [], 'secrets in the log');
  });
});
