// A local SMTP server the tests start themselves (the `smtp-server` package, from nodemailer's
// authors): it keeps every message it is sent, so a test reads a reset link out of the mail the
// service sent and opens it. Plain SMTP on loopback, with a user and password the service must
// give (the log scan checks the password never reaches the log).
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A received message: its envelope, headers and decoded plain-text body. */
export interface ReceivedMail {
  from: string;
  to: string[];
  headers: Record<string, string>;
  text: string;
}

export interface SmtpSink {
  /** `SMTP_URL` and `MAIL_FROM` for the service under test. */
  env: { SMTP_URL: string; MAIL_FROM: string };
  /** The password in SMTP_URL. */
  password: string;
  /** Every message received so far, oldest first. */
  messages: ReceivedMail[];
  /** The messages to `address`. */
  mailTo(address: string): ReceivedMail[];
  /** Waits for the `n`th message (1: the first) to `address`. */
  waitForMail(address: string, n?: number, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export const MAIL_FROM = 'Dataset Exchange <console@dx.example.org>';
const USER = 'dx-console';

/** The body of a message in its transfer encoding, decoded (quoted-printable, base64 or as is). */
function decodeBody(body: string, encoding: string): string {
  switch (encoding.toLowerCase()) {
    case 'quoted-printable':
      return Buffer.from(
        body
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      ).toString('utf8');
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

/** Parses a single-part plain-text message (what the service sends). */
export function parseMessage(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split + 4);
  const headers: Record<string, string> = {};
  // Folded header lines continue with whitespace.
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, text: decodeBody(body, headers['content-transfer-encoding'] ?? '7bit') };
}

/** Starts the sink on a loopback port the system picks. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const password = `sink-${Math.random().toString(36).slice(2)}-secret`;
  const messages: ReceivedMail[] = [];
  const waiting = new Set<() => void>();
  const server = new SMTPServer({
    secure: false,
    // No TLS on loopback; the service must still authenticate.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === password) callback(null, { user: USER });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const { headers, text } = parseMessage(Buffer.concat(chunks).toString('latin1'));
        const from = session.envelope.mailFrom;
        messages.push({
          from: from === false ? '' : from.address,
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          headers,
          text,
        });
        for (const wake of waiting) wake();
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as AddressInfo).port;
  const mailTo = (address: string) => messages.filter((m) => m.to.includes(address.toLowerCase()));
  return {
    env: { SMTP_URL: `smtp://${USER}:${password}@127.0.0.1:${port}`, MAIL_FROM },
    password,
    messages,
    mailTo,
    async waitForMail(address, n = 1, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = mailTo(address)[n - 1];
        if (found !== undefined) return found;
        const left = until - Date.now();
        if (left <= 0) throw new Error(`no message ${n} to ${address} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiting.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, left);
          waiting.add(wake);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The reset link in a message's text. */
export function resetLinkIn(mail: ReceivedMail): string {
  const link = /https?:\/\/\S+\/console\/reset-password\?token=dxr_[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
  if (link === undefined) throw new Error(`no reset link in:\n${mail.text}`);
  return link;
}
