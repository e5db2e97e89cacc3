// Sending mail over SMTP with nodemailer (the maintained standard for Node.js). Nothing of a
// message, its link or the server's credentials is logged: nodemailer's own logger stays off,
// and a failure is reported by its codes only (its error objects may quote the SMTP dialogue).
import type { Transporter } from 'nodemailer';
import type { MailSettings } from '../config/mail.js';

/** One plain-text message. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends messages; the console's password reset by mail is its one user. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Why a message was not sent, without anything the SMTP dialogue said. */
export class MailError extends Error {
  constructor(
    readonly code: string | null,
    readonly responseCode: number | null,
  ) {
    super(
      `the mail server did not take the message (${code ?? 'no code'}${responseCode !== null ? `, ${responseCode}` : ''})`,
    );
  }
}

/**
 * A mailer that sends through the SMTP server of `settings`, one connection per message.
 * nodemailer is loaded at the first message: a service that sends none does not hold its code.
 */
export function smtpMailer(settings: MailSettings): Mailer {
  let transport: Promise<Transporter> | null = null;
  const connect = async (): Promise<Transporter> => {
    const { default: nodemailer } = await import('nodemailer');
    return nodemailer.createTransport({
      url: settings.smtpUrl,
      logger: false,
      debug: false,
      // A server that hangs must not hold a send (and the service's shutdown) for minutes.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  };
  return {
    async send(message) {
      transport ??= connect();
      try {
        await (await transport).sendMail({ from: settings.from, ...message });
      } catch (err) {
        const e = err as { code?: unknown; responseCode?: unknown };
        throw new MailError(
          typeof e.code === 'string' ? e.code : null,
          typeof e.responseCode === 'number' ? e.responseCode : null,
        );
      }
    },
    close() {
      void transport?.then((t) => t.close());
    },
  };
}
