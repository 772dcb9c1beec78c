import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ParsedMail } from 'mailparser';
import { bearer } from '../helpers/auth.js';
import { forEachDatabase, uniqueName } from '../helpers/harness.js';
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

  test('an account an administrator creates with an address gets its set-up link there; the address stays unconfirmed', {
    timeout: 60_000,
  }, async () => {
    const admin = await adminSession(ctx);
    const create = (payload: Record<string, unknown>) =>
      ctx.app.inject({ method: 'POST', url: '/api/auth/admin/users', headers: bearer(admin.accessToken), payload });
    const username = uniqueName('made');
    const res = await create({ username, email: 'made.person@example.test' });
    assert.equal(res.statusCode, 201, res.body);
    const {
      user,
      setup_url: setupUrl,
      mailed,
    } = res.json() as { user: { email: string | null }; setup_url: string; mailed: boolean };
    assert.equal(mailed, true);
    const message = await mail.next();
    assert.equal(message.subject, 'Your Vellum account');
    assert.deepEqual(recipients(message), ['made.person@example.test']);
    assert.ok(message.text?.includes(`Your username is "${username}"`), message.text);
    const link = linkIn(message, `${PUBLIC_URL}/setup?token=`);
    assert.equal(link.href, setupUrl);
    assert.equal(user.email, null, "an address the owner has not confirmed is not the account's");

    // The mailed link is the set-up link: the person chooses a password with it.
    const setup = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/setup',
      payload: { token: link.searchParams.get('token'), password: 'amber-Orchard-compass-77-softly' },
    });
    assert.equal(setup.statusCode, 200, setup.body);

    const without = await create({ username: uniqueName('made') });
    assert.equal(without.statusCode, 201, without.body);
    assert.equal(without.json().mailed, false);
    await create({ username: uniqueName('made'), email: 'third@example.test' });
    assert.deepEqual(recipients(await mail.next()), ['third@example.test'], "the next mail is the third address's");
    assert.equal(mail.pending(), 0, 'nothing mailed for the account without an address');
  });
});
