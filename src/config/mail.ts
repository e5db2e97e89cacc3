// Outgoing mail, for password reset links asked for from the sign-in page. Off unless SMTP_URL is
// set; the variables are declared with the others in config.ts, how they combine is checked here.
import { redactUrl } from '../lib/redact.js';

/** Where mail goes and whom it comes from. */
export interface MailSettings {
  /** `smtp://` (STARTTLS when offered) or `smtps://` (TLS from the start), with credentials if any. */
  smtpUrl: string;
  /** The From of every message: an address, or `Name <address>`. */
  from: string;
}

/** The raw variables this module checks (already typed by config.ts). */
export interface MailVars {
  SMTP_URL: string;
  MAIL_FROM: string;
}

// An address, alone or in angle brackets after a name; no line breaks (header injection).
const FROM = /^(?:[^\r\n<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/** The mail settings, or null when SMTP_URL is not set; pushes one message per mistake onto `problems`. */
export function readMailConfig(v: MailVars, problems: string[]): MailSettings | null {
  if (v.SMTP_URL === '') {
    if (v.MAIL_FROM !== '') problems.push('MAIL_FROM: set, but SMTP_URL is not (set SMTP_URL to send mail)');
    return null;
  }
  if (!isSmtpUrl(v.SMTP_URL))
    problems.push(`SMTP_URL: must be an smtp:// or smtps:// URL with a host (got ${redactUrl(v.SMTP_URL)})`);
  if (v.MAIL_FROM === '')
    problems.push('MAIL_FROM: required when SMTP_URL is set (the address mail is sent from)');
  else if (!FROM.test(v.MAIL_FROM.trim()))
    problems.push(`MAIL_FROM: must be an address or "Name <address>" (got ${JSON.stringify(v.MAIL_FROM)})`);
  return { smtpUrl: v.SMTP_URL, from: v.MAIL_FROM.trim() };
}

function isSmtpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '';
  } catch {
    return false;
  }
}
