import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertReauthenticationRequired, bearer } from '../helpers/auth.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, login, signup, type Session } from '../helpers/harness.js';

/**
 * An account without a password (single sign-on makes them) and without a second factor has
 * nothing to re-authenticate with, so it could never set up its first factor, not even when
 * REQUIRE_SECOND_FACTOR sends it there. Within 10 minutes of signing in, starting the
 * authenticator app needs no proof; after that, or for anything else, the usual 401.
 */
const clock = frozenDate();
const MINUTE = 60_000;

forEachDatabase('the first factor of an account without a password', (ctx) => {
  const passwordless = async (): Promise<Session> => {
    const session = await login(ctx.app, (await signup(ctx.app)).username);
    // No route takes a password away (single sign-on makes such accounts): the test does.
    await ctx.database.db.updateTable('users').set({ password_hash: '' }).where('id', '=', session.userId).execute();
    return session;
  };
  const startTotp = (session: Session) =>
    ctx.app.inject({ method: 'POST', url: '/api/auth/2fa/totp', headers: bearer(session.accessToken), payload: {} });

  test('right after signing in: the authenticator app starts without a proof', async () => {
    const session = await passwordless();
    clock.tick(9 * MINUTE);
    const res = await startTotp(session);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.json().otpauth_url, /^otpauth:\/\//);
  });

  test('more than 10 minutes after signing in: 401 reauthentication_required', async () => {
    const session = await passwordless();
    clock.tick(11 * MINUTE);
    assertReauthenticationRequired(await startTotp(session), 'a stale session');
  });

  test('only the first factor, only enrolment, only without a password', async () => {
    const session = await passwordless();
    assertReauthenticationRequired(
      await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/sessions/end-others',
        headers: bearer(session.accessToken),
        payload: {},
      }),
      'ending sessions is not enrolment',
    );
    const withPassword = await login(ctx.app, (await signup(ctx.app)).username);
    assertReauthenticationRequired(await startTotp(withPassword), 'an account with a password gives it');
  });
});
