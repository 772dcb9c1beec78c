import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertProblem,
  assertReauthenticationRequired,
  bearer,
  newAdminSession,
  refreshSession,
} from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, login, newSession, signup, type Session } from '../helpers/harness.js';
import { linkIn, startMailServer, type MailServer } from '../helpers/mail-server.js';
import { assertMfaRequired, enrolledUser, loginWith } from '../mfa/support.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { racedApp } from '../helpers/pause.js';

const PUBLIC_URL = 'https://notes.example.test';
const NEW_PASSWORD = 'amber-Orchard-compass-77-softly';

forEachDatabase('password reset and e-mail addresses, with SMTP', (ctx) => {
  let mail: MailServer;
  before(async () => {
    mail = await startMailServer();
    await ctx.rebuild({ SMTP_URL: mail.url, MAIL_FROM: 'Vellum <vellum@example.test>', PUBLIC_URL });
  });
  after(async () => mail.close());

  const putEmail = (session: Session, payload: Record<string, unknown>) =>
    ctx.app.inject({ method: 'PUT', url: '/api/auth/owner/email', headers: session.auth, payload });
  const confirmEmail = (token: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/auth/owner/email/confirm', payload: { token } });
  const me = async (session: Session) =>
    (await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: session.auth })).json();
  const requestReset = (login: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/auth/password-reset', payload: { login } });
  const confirmReset = (token: string, newPassword: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset/confirm',
      payload: { token, new_password: newPassword },
    });

  /** A signed-in account whose address was confirmed through the mailed link. */
  async function withVerifiedEmail(): Promise<{ session: Session; email: string }> {
    const session = await newSession(ctx.app);
    const email = `${session.username}@Example.TEST`;
    const res = await putEmail(session, { email, password: session.password });
    assert.equal(res.statusCode, 202, res.body);
    const message = await mail.next();
    const link = linkIn(message, `${PUBLIC_URL}/confirm-email?token=`);
    assert.equal((await confirmEmail(link.searchParams.get('token')!)).statusCode, 200);
    return { session, email: email.toLowerCase() };
  }

  test('PUT /auth/owner/email: needs the password, mails a link, and sets the address only when it is followed', async () => {
    const session = await newSession(ctx.app);
    assert.equal((await me(session)).email, null);
    assertReauthenticationRequired(await putEmail(session, { email: 'someone@example.test' }), 'no password');
    assertReauthenticationRequired(
      await putEmail(session, { email: 'someone@example.test', password: 'wrong-password-entirely' }),
      'wrong password',
    );
    assertProblem(
      await putEmail(session, { email: 'not an address', password: session.password }),
      400,
      'Not a valid e-mail address (like name@example.com, at most 254 characters)',
    );

    const email = `${session.username}@example.test`;
    const res = await putEmail(session, { email, password: session.password });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().email, email);
    assert.equal(res.json().sent, true);
    const message = await mail.next();
    assert.equal(message.to && !Array.isArray(message.to) ? message.to.value[0]!.address : undefined, email);
    assert.equal(message.from?.value[0]?.address, 'vellum@example.test');
    const link = linkIn(message, `${PUBLIC_URL}/confirm-email?token=`);
    assert.equal((await me(session)).email, null, 'not before the link is followed');

    const confirmed = await confirmEmail(link.searchParams.get('token')!);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.json().email, email);
    assert.equal((await me(session)).email, email);
    assertProblem(
      await confirmEmail(link.searchParams.get('token')!),
      400,
      'This link is invalid, has expired or was already used; ask for a new one',
    );

    const removed = await putEmail(session, { email: null, password: session.password });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal((await me(session)).email, null);
  });

  test('an address another account confirmed first is 409 email_taken when the second link is followed', async () => {
    const first = await withVerifiedEmail();
    const other = await newSession(ctx.app);
    assert.equal((await putEmail(other, { email: first.email, password: other.password })).statusCode, 202);
    const link = linkIn(await mail.next(), `${PUBLIC_URL}/confirm-email?token=`);
    assertProblem(
      await confirmEmail(link.searchParams.get('token')!),
      409,
      'This e-mail address already belongs to another account',
    );
  });

  test('POST /auth/password-reset: the same 202 and body for an unknown name, an unknown address and a real account', async () => {
    const { session, email } = await withVerifiedEmail();
    const answers = [
      await requestReset('nobody-here-at-all'),
      await requestReset('nobody@example.test'),
      await requestReset(session.username),
    ];
    for (const res of answers) {
      assert.equal(res.statusCode, 202);
      assert.equal(res.body, answers[0]!.body);
      assert.equal(res.headers['content-type'], answers[0]!.headers['content-type']);
    }
    const message = await mail.next();
    assert.equal(message.to && !Array.isArray(message.to) ? message.to.value[0]!.address : undefined, email);
    const link = linkIn(message, `${PUBLIC_URL}/reset?token=`);
    assert.equal(link.pathname, '/reset');
    assert.equal(mail.pending(), 0, 'no mail for the unknown ones');
  });

  test('a reset link: a refused password does not spend it; then every session ends, the new password works, and it is single use', async () => {
    const { session, email } = await withVerifiedEmail();
    const other = await login(ctx.app, session.username);
    assert.equal((await requestReset(email.toUpperCase())).statusCode, 202, 'by address, any case');
    const token = linkIn(await mail.next(), `${PUBLIC_URL}/reset?token=`).searchParams.get('token')!;

    const weak = await confirmReset(token, 'short');
    assert.equal(weak.statusCode, 400);
    const done = await confirmReset(token, NEW_PASSWORD);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().username, session.username);
    // The owner hears of it at the confirmed address (mail/security-notice.ts).
    const notice = await mail.next();
    assert.equal(notice.subject, 'Your Vellum password was reset');
    assert.match(notice.text ?? '', /The password was reset with a reset link/);

    for (const s of [session, other]) assert.equal((await refreshSession(ctx.app, s.refreshToken)).statusCode, 401);
    const oldLogin = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: session.username, password: GOOD_PASSWORD },
    });
    assert.equal(oldLogin.statusCode, 401);
    await login(ctx.app, session.username, NEW_PASSWORD);
    assertProblem(
      await confirmReset(token, 'another-Granite-meadow-19-slowly'),
      400,
      'This link is invalid, has expired or was already used; ask for a new one',
    );
  });

  test('a newer reset link voids the older one; an expired link is refused', async () => {
    const { session } = await withVerifiedEmail();
    await requestReset(session.username);
    const older = linkIn(await mail.next(), `${PUBLIC_URL}/reset?token=`).searchParams.get('token')!;
    await requestReset(session.username);
    const newer = linkIn(await mail.next(), `${PUBLIC_URL}/reset?token=`).searchParams.get('token')!;
    assert.equal((await confirmReset(older, NEW_PASSWORD)).statusCode, 400);

    await ctx.database.db
      .updateTable('account_links')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('user_id', '=', session.userId)
      .execute();
    assert.equal((await confirmReset(newer, NEW_PASSWORD)).statusCode, 400, 'past its 30 minutes');
  });

  test('a reset link stops working once the account is taken back: a password change, the address removed or replaced, a disabling', async () => {
    const resetLink = async (login: string) => {
      assert.equal((await requestReset(login)).statusCode, 202);
      return linkIn(await mail.next(), `${PUBLIC_URL}/reset?token=`).searchParams.get('token')!;
    };
    const refused = async (token: string, what: string) => {
      const res = await confirmReset(token, 'another-Granite-meadow-19-slowly');
      assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
      assertProblem(res, 400, 'This link is invalid, has expired or was already used; ask for a new one');
    };

    const changed = await withVerifiedEmail();
    const beforeChange = await resetLink(changed.session.username);
    const change = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner',
      headers: changed.session.auth,
      payload: { old_password: changed.session.password, new_password: NEW_PASSWORD },
    });
    assert.equal(change.statusCode, 200, change.body);
    assert.equal((await mail.next()).subject, 'Your Vellum password was changed');
    await refused(beforeChange, 'after a password change');

    const removed = await withVerifiedEmail();
    const beforeRemoval = await resetLink(removed.email);
    const removal = await putEmail(removed.session, { email: null, password: removed.session.password });
    assert.equal(removal.statusCode, 200, removal.body);
    await refused(beforeRemoval, 'after the address was removed');

    const replaced = await withVerifiedEmail();
    const beforeReplacing = await resetLink(replaced.email);
    const replacing = await putEmail(replaced.session, {
      email: `new-${replaced.session.username}@example.test`,
      password: replaced.session.password,
    });
    assert.equal(replacing.statusCode, 202, replacing.body);
    const confirmation = linkIn(await mail.next(), `${PUBLIC_URL}/confirm-email?token=`);
    assert.equal((await confirmEmail(confirmation.searchParams.get('token')!)).statusCode, 200);
    await refused(beforeReplacing, 'after another address was confirmed');

    const admin = await newAdminSession(ctx);
    const disabled = await withVerifiedEmail();
    const beforeDisabling = await resetLink(disabled.email);
    for (const flag of [true, false]) {
      const res = await ctx.app.inject({
        method: 'PATCH',
        url: `/api/auth/admin/${disabled.session.userId}`,
        headers: bearer(admin.accessToken),
        payload: { disabled: flag },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    await refused(beforeDisabling, 'after a disabling, enabled again since');

    // A link asked for after all that works.
    const fresh = await confirmReset(await resetLink(disabled.email), NEW_PASSWORD);
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.equal((await mail.next()).subject, 'Your Vellum password was reset');
  });

  test('POST /auth/admin/{id}/password-reset: a 30-minute link for the administrator to hand over', async () => {
    const admin = await newAdminSession(ctx);
    const user = await newSession(ctx.app);
    const forbidden = await ctx.app.inject({
      method: 'POST',
      url: `/api/auth/admin/${admin.userId}/password-reset`,
      headers: user.auth,
    });
    assert.equal(forbidden.statusCode, 403);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/api/auth/admin/${user.userId}/password-reset`,
      headers: bearer(admin.accessToken),
    });
    assert.equal(res.statusCode, 200, res.body);
    const { url, expires_at } = res.json();
    assert.ok(url.startsWith(`${PUBLIC_URL}/reset?token=`), url);
    const minutes = (Date.parse(expires_at) - Date.now()) / 60_000;
    assert.ok(minutes > 29 && minutes <= 30, `${minutes} minutes`);
    assert.equal(mail.pending(), 0, 'nothing mailed');
    const done = await confirmReset(new URL(url).searchParams.get('token')!, NEW_PASSWORD);
    assert.equal(done.statusCode, 200, done.body);
    await login(ctx.app, user.username, NEW_PASSWORD);
    const missing = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/admin/00000000-0000-4000-8000-000000000000/password-reset',
      headers: bearer(admin.accessToken),
    });
    assertProblem(missing, 404, 'User not found');
  });
});

forEachDatabase('a reset request answers before any link is made', (ctx) => {
  let mail: MailServer;
  before(async () => {
    mail = await startMailServer();
    await ctx.rebuild({ SMTP_URL: mail.url, MAIL_FROM: 'Vellum <vellum@example.test>', PUBLIC_URL });
  });
  after(async () => mail.close());
  // Built after the rebuild above (hooks run in order), so it sends mail too.
  const raced = racedApp(ctx);

  test('for a real account with a verified address, the 202 leaves while the link is not yet stored or mailed', {
    timeout: 30_000,
  }, async () => {
    const session = await newSession(ctx.app);
    const email = `${session.username}@example.test`;
    const put = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner/email',
      headers: session.auth,
      payload: { email, password: session.password },
    });
    assert.equal(put.statusCode, 202, put.body);
    const confirm = linkIn(await mail.next(), `${PUBLIC_URL}/confirm-email?token=`).searchParams.get('token')!;
    const confirmed = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/owner/email/confirm',
      payload: { token: confirm },
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);

    // Held where the link would be stored: the answer comes anyway, exactly as for nobody, so the
    // extra write (and the mail) cannot show in its time.
    const gate = raced.pause.arm('password-reset:link');
    const known = await raced.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset',
      payload: { login: session.username },
    });
    const unknown = await raced.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset',
      payload: { login: 'nobody-here-at-all' },
    });
    assert.equal(known.statusCode, 202);
    assert.equal(known.body, unknown.body);
    await gate.reached;
    const stored = await ctx.database.db
      .selectFrom('account_links')
      .select('id')
      .where('user_id', '=', session.userId)
      .where('purpose', '=', 'password_reset')
      .execute();
    assert.deepEqual(stored, [], 'no link stored before the hold ends');
    assert.equal(mail.pending(), 0);

    gate.release();
    const link = linkIn(await mail.next(), `${PUBLIC_URL}/reset?token=`);
    const done = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset/confirm',
      payload: { token: link.searchParams.get('token'), new_password: NEW_PASSWORD },
    });
    assert.equal(done.statusCode, 200, done.body);
  });
});

forEachDatabase('password reset keeps the second factor', (ctx) => {
  test('after a reset, the new password still needs the authenticator code, and the recovery codes still work', async () => {
    const admin = await newAdminSession(ctx);
    const user = await enrolledUser(ctx.app);
    const made = await ctx.app.inject({
      method: 'POST',
      url: `/api/auth/admin/${user.userId}/password-reset`,
      headers: bearer(admin.accessToken),
    });
    const token = new URL(made.json().url).searchParams.get('token')!;
    const done = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset/confirm',
      payload: { token, new_password: NEW_PASSWORD },
    });
    assert.equal(done.statusCode, 200, done.body);
    assertMfaRequired(await loginWith(ctx.app, user.username, undefined, NEW_PASSWORD));
    const withCode = await loginWith(ctx.app, user.username, user.recoveryCodes[0], NEW_PASSWORD);
    assert.equal(withCode.statusCode, 200, withCode.body);
    const me = await ctx.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: bearer(withCode.json().access_token),
    });
    assert.equal(me.json().mfa.totp, true);
  });
});

forEachDatabase('password reset links under concurrency', (ctx) => {
  test('two confirmations of one link at once: exactly one succeeds', async () => {
    const admin = await newAdminSession(ctx);
    const user = await newSession(ctx.app);
    const made = await ctx.app.inject({
      method: 'POST',
      url: `/api/auth/admin/${user.userId}/password-reset`,
      headers: bearer(admin.accessToken),
    });
    const token = new URL(made.json().url).searchParams.get('token')!;
    const answers = await Promise.all(
      [NEW_PASSWORD, 'another-Granite-meadow-19-slowly'].map((password) =>
        ctx.app.inject({
          method: 'POST',
          url: '/api/auth/password-reset/confirm',
          payload: { token, new_password: password },
        }),
      ),
    );
    assert.deepEqual(answers.map((res) => res.statusCode).sort(), [200, 400]);
  });

  test('the maintenance task deletes used and expired links and keeps live ones', async () => {
    const admin = await newAdminSession(ctx);
    const user = await newSession(ctx.app);
    const make = () =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/auth/admin/${user.userId}/password-reset`,
        headers: bearer(admin.accessToken),
      });
    await make(); // voided by the next one: counts as used
    const live = new URL((await make()).json().url).searchParams.get('token')!;
    const task = maintenanceTasks(ctx.config).find((t) => t.name === 'account-links')!;
    const summary = await task.run(ctx.database.db, new Date());
    assert.ok((summary.links ?? 0) >= 1);
    const rows = await ctx.database.db
      .selectFrom('account_links')
      .select(['used_at'])
      .where('user_id', '=', user.userId)
      .execute();
    assert.deepEqual(rows, [{ used_at: null }]);
    const done = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset/confirm',
      payload: { token: live, new_password: NEW_PASSWORD },
    });
    assert.equal(done.statusCode, 200, done.body);
  });
});

forEachDatabase('password reset and e-mail addresses, without SMTP', (ctx) => {
  test('PUT /auth/owner/email is 409 mail_unavailable; a reset request still answers 202 alike', async () => {
    const session = await newSession(ctx.app);
    const res = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner/email',
      headers: session.auth,
      payload: { email: 'someone@example.test', password: session.password },
    });
    assertProblem(
      res,
      409,
      'This server sends no e-mail (SMTP_URL is not set), so an address cannot be confirmed; ask an administrator',
    );
    const known = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset',
      payload: { login: session.username },
    });
    const unknown = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/password-reset',
      payload: { login: 'nobody-at-all' },
    });
    assert.equal(known.statusCode, 202);
    assert.equal(known.body, unknown.body);
  });
});

forEachDatabase(
  'PASSWORD_LOGIN=off',
  (ctx) => {
    test('a password login is 403 password_login_disabled, except for administrators; a wrong password stays 401', async () => {
      // Accounts from before passwords were turned off (sign-up with one is refused now).
      await ctx.rebuild({ PASSWORD_LOGIN: 'on' });
      const admin = await newAdminSession(ctx);
      const user = await signup(ctx.app);
      await ctx.rebuild();
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: user.username, password: GOOD_PASSWORD },
      });
      assertProblem(
        res,
        403,
        'Signing in with a password is turned off on this server; use single sign-on or a passkey',
      );
      assert.equal(res.json().code, 'password_login_disabled');
      assert.equal(res.headers['set-cookie'], undefined);
      const wrong = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: user.username, password: 'not-the-password-at-all' },
      });
      assert.equal(wrong.statusCode, 401);
      await login(ctx.app, admin.username);
      const config = await ctx.app.inject({ method: 'GET', url: '/api/auth/config' });
      assert.deepEqual(config.json(), { signup: 'open', password_login: false, oidc: null, passkeys: true });
    });
  },
  { PASSWORD_LOGIN: 'off' },
);
