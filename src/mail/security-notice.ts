import type { FastifyBaseLogger } from 'fastify';
import type { ClientInfo } from '../shared/client-info.js';
import type { Mailer } from './mailer.js';

/** A change to how an account signs in that its owner should hear about, whoever made it. */
export type SecurityChange = 'totp' | 'passkey' | 'password' | 'password-reset';

/** Tells the account's owner of a change (given to the services by app.ts; absent in the CLI). */
export type SecurityNotice = (userId: string, change: SecurityChange, client: ClientInfo) => void;

const WHAT: Record<SecurityChange, { subject: string; happened: string }> = {
  totp: {
    subject: 'A new second factor was added to your Vellum account',
    happened: 'An authenticator app was set up as a second factor',
  },
  passkey: {
    subject: 'A new passkey was added to your Vellum account',
    happened: 'A passkey was added',
  },
  password: {
    subject: 'Your Vellum password was changed',
    happened: 'The password was changed',
  },
  'password-reset': {
    subject: 'Your Vellum password was reset',
    happened: 'The password was reset with a reset link',
  },
};

/**
 * Mail to the account's confirmed address (none without one, none without SMTP). Called after the
 * change committed and returns at once: the mail goes out after the answer, and its failure is
 * only logged (Mailer.send never throws), so it can never fail or slow the request that made it.
 */
export function securityNotices(options: {
  mailer: Mailer;
  log: FastifyBaseLogger;
  publicUrl: string;
  /** The account's username and confirmed address (accounts/), undefined when it is gone. */
  findRecipient: (userId: string) => Promise<{ username: string; email: string | null } | undefined>;
}): SecurityNotice {
  const { mailer, log, publicUrl, findRecipient } = options;
  return (userId, change, client) => {
    if (!mailer.enabled) return;
    const send = async () => {
      const recipient = await findRecipient(userId);
      if (recipient?.email == null) return;
      const { subject, happened } = WHAT[change];
      await mailer.send({
        to: recipient.email,
        subject,
        text: [
          `Hello ${recipient.username},`,
          '',
          `${happened} on your Vellum account at ${publicUrl}`,
          `on ${new Date().toISOString().replace('T', ' ').slice(0, 16)} UTC` +
            (client.ip === undefined ? '.' : ` from the address ${client.ip}.`),
          '',
          'If this was you, there is nothing to do.',
          `If it was not, reset your password now (${publicUrl}/login, "Forgot password?"), review your`,
          'second factors and sessions under Account, and tell your administrator.',
          '',
        ].join('\n'),
      });
    };
    send().catch((error: unknown) => log.warn({ err: error, userId, change }, 'a security notice was not sent'));
  };
}
