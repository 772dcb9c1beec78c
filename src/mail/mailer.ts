import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';
import type { MailConfig } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sending mail (the port): through SMTP when SMTP_URL is set, else nowhere. `send` never throws:
 * a mail that could not go out is logged and answered as 'not sent', and the caller decides what
 * that means (a reset request answers the same either way; an administrator gets the link).
 */
export interface Mailer {
  /** False without SMTP_URL: callers can say so before making a link nobody will receive. */
  readonly enabled: boolean;
  send(message: MailMessage): Promise<'sent' | 'not sent'>;
  close(): void;
}

export function createMailer(config: MailConfig | null, log: FastifyBaseLogger): Mailer {
  if (config === null) return noMailer;
  const transport = nodemailer.createTransport(config.smtpUrl);
  return {
    enabled: true,
    async send(message) {
      try {
        await transport.sendMail({ from: config.from, to: message.to, subject: message.subject, text: message.text });
        return 'sent';
      } catch (error) {
        // The error may name the server, never the message's link: log the subject only.
        log.warn({ err: error, subject: message.subject }, 'sending mail failed');
        return 'not sent';
      }
    },
    close: () => transport.close(),
  };
}

/** Without SMTP_URL: nothing is sent, and every caller is told so. */
export const noMailer: Mailer = {
  enabled: false,
  send: async () => 'not sent',
  close: () => {},
};
