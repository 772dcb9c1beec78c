import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on a local port for one test file; every message it receives is parsed with mailparser. */
export interface MailServer {
  /** smtp://127.0.0.1:<port>, for SMTP_URL. */
  url: string;
  /** The next message received (already received ones first, in order). */
  next(): Promise<ParsedMail>;
  /** How many messages arrived and were not taken by next(). */
  pending(): number;
  close(): Promise<void>;
}

export async function startMailServer(): Promise<MailServer> {
  const received: ParsedMail[] = [];
  const waiting: ((mail: ParsedMail) => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const waiter = waiting.shift();
          if (waiter === undefined) received.push(mail);
          else waiter(mail);
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    next: () => {
      const mail = received.shift();
      return mail !== undefined ? Promise.resolve(mail) : new Promise((resolve) => waiting.push(resolve));
    },
    pending: () => received.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The one link in a mail's text that starts with `prefix`. */
export function linkIn(mail: ParsedMail, prefix: string): URL {
  const links = (mail.text ?? '').match(/https?:\/\/\S+/g) ?? [];
  const found = links.filter((link) => link.startsWith(prefix));
  if (found.length !== 1) throw new Error(`expected one link starting ${prefix} in: ${mail.text}`);
  return new URL(found[0]!);
}
