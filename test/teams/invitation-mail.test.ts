import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ParsedMail } from 'mailparser';
import { forEachDatabase } from '../helpers/harness.js';
import { linkIn, startMailServer, type MailServer } from '../helpers/mail-server.js';
import { adminSession, invite } from './support.js';

const PUBLIC_URL = 'https://notes.example.test';

const recipients = (message: ParsedMail) =>
  (Array.isArray(message.to) ? message.to : [message.to]).flatMap((to) => to?.value.map((v) => v.address) ?? []);

// An invitation made for an e-mail address is mailed to it when SMTP_URL is set (CONTRACT part 3,
// "Invitations"); without an address, or without SMTP, the administrator hands the link over.
forEachDatabase('invitations by mail', (ctx) => {
  let mail: MailServer;
  before(async () => {
    mail = await startMailServer();
    await ctx.rebuild({ SMTP_URL: mail.url, MAIL_FROM: 'Vellum <vellum@example.test>', PUBLIC_URL });
  });
  after(async () => mail.close());

  test('an invitation for an address is mailed there with its link; one without an address is not', {
    timeout: 60_000,
  }, async () => {
    const admin = await adminSession(ctx);
    const made = await invite(ctx.app, admin.accessToken, { email: 'new.person@example.test' });
    const message = await mail.next();
    assert.equal(message.subject, 'You are invited to Vellum');
    assert.deepEqual(recipients(message), ['new.person@example.test']);
    assert.equal(linkIn(message, `${PUBLIC_URL}/signup?invitation=`).href, made.url);

    await invite(ctx.app, admin.accessToken);
    await invite(ctx.app, admin.accessToken, { email: 'second@example.test' });
    assert.deepEqual(recipients(await mail.next()), ['second@example.test'], "the next mail is the second address's");
    assert.equal(mail.pending(), 0, 'nothing mailed for the invitation without an address');
  });
});
