import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { ParsedMail } from 'mailparser';
import { bearer } from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, newSession, type Session, type TestContext } from '../helpers/harness.js';
import { startMailServer, type MailServer } from '../helpers/mail-server.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { post, totpCode } from '../mfa/support.js';

const PUBLIC_URL = 'https://notes.example.test';
const NEW_PASSWORD = 'amber-Canyon-whistle-77-softly';

const recipients = (message: ParsedMail) =>
  (Array.isArray(message.to) ? message.to : [message.to]).flatMap((to) => to?.value.map((v) => v.address) ?? []);

/** A new account whose address is confirmed (set in storage: the confirmation flow has its own tests). */
async function withAddress(ctx: TestContext, prefix: string): Promise<Session & { email: string }> {
  const session = await newSession(ctx.app, prefix);
  const email = `${session.username}@example.test`;
  await ctx.database.db.updateTable('users').set({ email }).where('id', '=', session.userId).execute();
  return { ...session, email };
}

const changePassword = (app: FastifyInstance, user: Session) =>
  app.inject({
    method: 'PUT',
    url: '/api/auth/owner',
    headers: bearer(user.accessToken),
    payload: { old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD },
  });

async function enrolTotp(app: FastifyInstance, user: Session) {
  const start = await post(app, '/api/auth/2fa/totp', user.accessToken, { password: GOOD_PASSWORD });
  assert.equal(start.statusCode, 200, start.body);
  const { secret } = start.json() as { secret: string };
  return post(app, '/api/auth/2fa/totp/confirm', user.accessToken, { code: totpCode(secret) });
}

async function addPasskey(app: FastifyInstance, user: Session) {
  const options = await post(app, '/api/auth/passkeys/options', user.accessToken, { password: GOOD_PASSWORD });
  assert.equal(options.statusCode, 200, options.body);
  return post(app, '/api/auth/passkeys', user.accessToken, {
    name: 'Laptop',
    credential: new SoftAuthenticator(PUBLIC_URL).register(options.json()),
  });
}

// A new second factor or a new password is mailed to the account's confirmed address (CONTRACT
// part 3, "E-mail"), after the change is made; without an address nothing is sent.
forEachDatabase('security notices by mail', (ctx) => {
  let mail: MailServer;
  before(async () => {
    mail = await startMailServer();
    await ctx.rebuild({ SMTP_URL: mail.url, MAIL_FROM: 'Vellum <vellum@example.test>', PUBLIC_URL });
  });
  after(async () => mail.close());

  test('a password change is mailed to the confirmed address; an account without one gets nothing', {
    timeout: 60_000,
  }, async () => {
    const silent = await newSession(ctx.app, 'noaddr');
    assert.equal((await changePassword(ctx.app, silent)).statusCode, 200);
    const user = await withAddress(ctx, 'pw');
    const res = await changePassword(ctx.app, user);
    assert.equal(res.statusCode, 200, res.body);
    const message = await mail.next();
    assert.deepEqual(recipients(message), [user.email], 'the first mail is the second account’s');
    assert.equal(message.subject, 'Your Vellum password was changed');
    assert.match(message.text ?? '', new RegExp(`Hello ${user.username},`));
    assert.match(
      message.text ?? '',
      /The password was changed on your Vellum account at https:\/\/notes\.example\.test/,
    );
    assert.match(message.text ?? '', /Forgot password\?/);
    assert.equal(mail.pending(), 0);
  });

  test('an authenticator app and a passkey added are each mailed', { timeout: 60_000 }, async () => {
    const user = await withAddress(ctx, 'factor');
    const confirmed = await enrolTotp(ctx.app, user);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    const first = await mail.next();
    assert.deepEqual(recipients(first), [user.email]);
    assert.equal(first.subject, 'A new second factor was added to your Vellum account');
    assert.match(first.text ?? '', /An authenticator app was set up as a second factor/);

    const added = await addPasskey(ctx.app, user);
    assert.equal(added.statusCode, 201, added.body);
    const second = await mail.next();
    assert.deepEqual(recipients(second), [user.email]);
    assert.equal(second.subject, 'A new passkey was added to your Vellum account');
    assert.equal(mail.pending(), 0);
  });
});

// An SMTP server that cannot be reached: the change is made and answered as usual, the mail only logged.
forEachDatabase('security notices: a mail that cannot be sent never fails the request', (ctx) => {
  before(async () => {
    // Port 9 (discard) on localhost: nothing listens there, the connection is refused.
    await ctx.rebuild({ SMTP_URL: 'smtp://127.0.0.1:9', MAIL_FROM: 'vellum@example.test', PUBLIC_URL });
  });

  test('password change, authenticator app and passkey all succeed', async () => {
    const user = await withAddress(ctx, 'nomail');
    assert.equal((await enrolTotp(ctx.app, user)).statusCode, 200);
    assert.equal((await addPasskey(ctx.app, user)).statusCode, 201);
    assert.equal((await changePassword(ctx.app, user)).statusCode, 200);
  });
});
