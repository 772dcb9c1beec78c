import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import {
  assertReauthenticationRequired,
  bearer,
  newAdminSession,
  REFRESH,
  refreshSession,
  setCookies,
} from '../helpers/auth.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, GOOD_PASSWORD, login, signup, uniqueName } from '../helpers/harness.js';
import { assertThrottled, THROTTLE_ON } from '../security/support.js';
import {
  assertMfaRequired,
  assertWrongCode,
  del,
  enrolledUser,
  loginWith,
  post,
  STEP_MS,
  totpCode,
} from './support.js';

// Date stands still and moves only when a test says so: time steps are chosen, not waited for.
const clock = frozenDate();

const RECOVERY_CODE = /^[a-z2-7]{4}(-[a-z2-7]{4}){5}$/;

forEachDatabase('second factor: TOTP', (ctx) => {
  test('the life cycle: start with the password, confirm with a code, log in with one, turn off', async () => {
    const { username } = await signup(ctx.app, uniqueName('totp'));
    const session = await login(ctx.app, username);
    const me = async () =>
      (await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: session.auth })).json().mfa;
    assert.deepEqual(await me(), { totp: false, passkeys: 0 });

    const wrongPassword = await post(ctx.app, '/api/auth/2fa/totp', session.accessToken, {
      password: 'not-the-password-at-all',
    });
    assert.equal(wrongPassword.statusCode, 401);
    assert.equal(wrongPassword.json().code, 'reauthentication_required');
    assert.equal(
      (await post(ctx.app, '/api/auth/2fa/totp', session.accessToken, {})).json().code,
      'reauthentication_required',
    );
    assert.equal(
      (await post(ctx.app, '/api/auth/2fa/totp', session.accessToken)).json().code,
      'reauthentication_required',
      'no body at all',
    );
    const start = await post(ctx.app, '/api/auth/2fa/totp', session.accessToken, { password: GOOD_PASSWORD });
    assert.equal(start.statusCode, 200, start.body);
    assert.equal(start.headers['cache-control'], 'no-store');
    const { secret, otpauth_url } = start.json();
    assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits in base32');
    const url = new URL(otpauth_url);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.host, 'totp');
    assert.equal(decodeURIComponent(url.pathname), `/Vellum:${username}`);
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      issuer: 'Vellum',
      secret,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });

    // Not on until confirmed: logins go on without a code.
    assert.deepEqual(await me(), { totp: false, passkeys: 0 });
    assert.equal((await loginWith(ctx.app, username)).statusCode, 200);
    assertWrongCode(
      await post(ctx.app, '/api/auth/2fa/totp/confirm', session.accessToken, {
        code: totpCode(secret, Date.now() + 5 * STEP_MS),
      }),
    );
    const confirm = await post(ctx.app, '/api/auth/2fa/totp/confirm', session.accessToken, { code: totpCode(secret) });
    assert.equal(confirm.statusCode, 200, confirm.body);
    const codes: string[] = confirm.json().recovery_codes;
    assert.equal(codes.length, 10);
    for (const code of codes) assert.match(code, RECOVERY_CODE);
    assert.equal(new Set(codes).size, 10);
    assert.deepEqual(await me(), { totp: true, passkeys: 0 });
    assert.equal(
      (await post(ctx.app, '/api/auth/2fa/totp', session.accessToken, { password: GOOD_PASSWORD })).json().code,
      'totp_enabled',
    );
    assert.equal(
      (await post(ctx.app, '/api/auth/2fa/totp/confirm', session.accessToken, { code: totpCode(secret) })).statusCode,
      409,
    );

    // The right password alone: 401 mfa_required, nothing issued; a wrong password still says only that.
    assertMfaRequired(await loginWith(ctx.app, username));
    assert.equal(
      (await loginWith(ctx.app, username, totpCode(secret), 'wrong-password-entirely')).json().detail,
      'Invalid credentials',
    );
    // The code the confirmation used is spent; the next step's code works, once.
    assertWrongCode(await loginWith(ctx.app, username, totpCode(secret)));
    clock.tick(STEP_MS);
    const code = totpCode(secret);
    const ok = await loginWith(ctx.app, username, code);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.ok(setCookies(ok).get(REFRESH)?.value, 'a refresh cookie, as any login');
    assert.deepEqual(Object.keys(ok.json()), ['access_token']);
    assertWrongCode(await loginWith(ctx.app, username, code));

    // Turning off needs the password and a current code.
    clock.tick(STEP_MS);
    assert.equal(
      (
        await del(ctx.app, '/api/auth/2fa/totp', session.accessToken, {
          password: 'wrong-password-entirely',
          code: totpCode(secret),
        })
      ).json().code,
      'reauthentication_required',
    );
    assert.equal(
      (await del(ctx.app, '/api/auth/2fa/totp', session.accessToken, { code: totpCode(secret) })).json().code,
      'reauthentication_required',
    );
    assertWrongCode(
      await del(ctx.app, '/api/auth/2fa/totp', session.accessToken, {
        password: GOOD_PASSWORD,
        code: '000000' === totpCode(secret) ? '111111' : '000000',
      }),
    );
    const off = await del(ctx.app, '/api/auth/2fa/totp', session.accessToken, {
      password: GOOD_PASSWORD,
      code: totpCode(secret),
    });
    assert.equal(off.statusCode, 204, off.body);
    assert.deepEqual(await me(), { totp: false, passkeys: 0 });
    assert.equal((await loginWith(ctx.app, username)).statusCode, 200);
    assert.equal(
      (
        await del(ctx.app, '/api/auth/2fa/totp', session.accessToken, {
          password: GOOD_PASSWORD,
          code: totpCode(secret),
        })
      ).json().code,
      'totp_not_enabled',
    );
  });

  test('clock drift: one step either way is accepted, two are not; an earlier step after a later one is refused', async () => {
    const user = await enrolledUser(ctx.app);
    clock.tick(10 * STEP_MS);
    const now = Date.now();
    assertWrongCode(await loginWith(ctx.app, user.username, totpCode(user.secret, now - 2 * STEP_MS)));
    assertWrongCode(await loginWith(ctx.app, user.username, totpCode(user.secret, now + 2 * STEP_MS)));
    assert.equal((await loginWith(ctx.app, user.username, totpCode(user.secret, now - STEP_MS))).statusCode, 200);
    assert.equal((await loginWith(ctx.app, user.username, totpCode(user.secret, now + STEP_MS))).statusCode, 200);
    // The current step is before the last accepted one (now + 1 step): a replay in all but name.
    assertWrongCode(await loginWith(ctx.app, user.username, totpCode(user.secret, now)));
  });

  test('the same code sent twice at once: exactly one login', async () => {
    const user = await enrolledUser(ctx.app);
    clock.tick(STEP_MS);
    const code = totpCode(user.secret);
    const results = await Promise.all(Array.from({ length: 8 }, () => loginWith(ctx.app, user.username, code)));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
  });

  test('oathtool, an independent implementation, computes the codes the service accepts', {
    skip: oathtoolMissing(),
  }, async () => {
    const user = await enrolledUser(ctx.app);
    for (let i = 1; i <= 3; i++) {
      clock.tick(STEP_MS);
      const seconds = Math.floor(Date.now() / 1000);
      const expected = execFileSync('oathtool', ['--totp', '--base32', `--now=@${seconds}`, user.secret], {
        encoding: 'utf8',
      }).trim();
      assert.equal(totpCode(user.secret), expected);
      assert.equal((await loginWith(ctx.app, user.username, expected)).statusCode, 200);
    }
  });

  test('recovery codes: each works once (also at once), in any case and spacing; new ones replace the old', async () => {
    const user = await enrolledUser(ctx.app);
    const [first, second, third] = user.recoveryCodes as [string, string, string];
    assert.equal((await loginWith(ctx.app, user.username, first)).statusCode, 200);
    assertWrongCode(await loginWith(ctx.app, user.username, first));
    assert.equal(
      (await loginWith(ctx.app, user.username, ` ${second.toUpperCase().replace(/-/g, ' ')} `)).statusCode,
      200,
    );
    const race = await Promise.all(Array.from({ length: 8 }, () => loginWith(ctx.app, user.username, third)));
    assert.deepEqual(race.map((r) => r.statusCode).sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
    assertWrongCode(await loginWith(ctx.app, user.username, 'aaaa-aaaa-aaaa-aaaa-aaaa-aaaa'));

    clock.tick(STEP_MS);
    // New codes need the password again: a code alone (an access token and a phone) is not enough, and the code is not spent.
    for (const password of [undefined, 'wrong-password-entirely']) {
      const refused = await post(ctx.app, '/api/auth/2fa/recovery-codes', user.accessToken, {
        code: totpCode(user.secret),
        ...(password === undefined ? {} : { password }),
      });
      assertReauthenticationRequired(refused, `password ${password}`);
    }
    const fresh = await post(ctx.app, '/api/auth/2fa/recovery-codes', user.accessToken, {
      password: GOOD_PASSWORD,
      code: totpCode(user.secret),
    });
    assert.equal(fresh.statusCode, 200, fresh.body);
    const codes: string[] = fresh.json().recovery_codes;
    assert.equal(codes.length, 10);
    assertWrongCode(await loginWith(ctx.app, user.username, user.recoveryCodes[5]));
    assert.equal((await loginWith(ctx.app, user.username, codes[0])).statusCode, 200);
    // A recovery code also proves the second factor for turning it off.
    assert.equal(
      (await del(ctx.app, '/api/auth/2fa/totp', user.accessToken, { password: GOOD_PASSWORD, code: codes[1] }))
        .statusCode,
      204,
    );
    assert.equal(
      (await ctx.database.db.selectFrom('recovery_codes').select('id').where('user_id', '=', user.userId).execute())
        .length,
      0,
    );
  });

  test('at rest: the secret is encrypted (and bound to its user), recovery codes are hashes', async () => {
    const user = await enrolledUser(ctx.app);
    const row = await ctx.database.db
      .selectFrom('totp_factors')
      .select(['secret'])
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    assert.doesNotMatch(row.secret, new RegExp(user.secret, 'i'));
    assert.ok(!Buffer.from(row.secret).includes(Buffer.from(user.secret)));
    const hashes = await ctx.database.db
      .selectFrom('recovery_codes')
      .select(['code_hash'])
      .where('user_id', '=', user.userId)
      .execute();
    assert.equal(hashes.length, 10);
    for (const { code_hash } of hashes) {
      assert.match(code_hash, /^[0-9a-f]{64}$/);
      for (const code of user.recoveryCodes) assert.ok(!code_hash.includes(code.replace(/-/g, '')));
    }
    // Copied to another account, the sealed secret does not open: that login fails closed, not open.
    const other = await enrolledUser(ctx.app);
    await ctx.database.db
      .updateTable('totp_factors')
      .set({ secret: row.secret })
      .where('user_id', '=', other.userId)
      .execute();
    clock.tick(STEP_MS);
    const res = await loginWith(ctx.app, other.username, totpCode(user.secret));
    assert.equal(res.statusCode, 500);
    assert.doesNotMatch(res.body, /secret|decipher|auth/i);
  });

  test('wrong codes count against the login lockout', async () => {
    const user = await enrolledUser(ctx.app);
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_FAILURES: '3' });
    for (let i = 0; i < 3; i++) assertWrongCode(await loginWith(app, user.username, `00000${i}`));
    clock.tick(STEP_MS);
    assertThrottled(await loginWith(app, user.username, totpCode(user.secret)), 60);
    await ctx.rebuild();
  });

  test("an administrator removes a user's factors; audited like every enrolment and removal", async () => {
    const user = await enrolledUser(ctx.app);
    const admin = await newAdminSession(ctx);
    const outsider = await login(ctx.app, (await signup(ctx.app)).username);
    assert.equal((await del(ctx.app, `/api/auth/admin/${user.userId}/mfa`, outsider.accessToken)).statusCode, 403);
    assert.equal(
      (await del(ctx.app, '/api/auth/admin/00000000-0000-4000-8000-000000000000/mfa', admin.accessToken)).json().detail,
      'User not found',
    );
    assertMfaRequired(await loginWith(ctx.app, user.username));
    assert.equal((await del(ctx.app, `/api/auth/admin/${user.userId}/mfa`, admin.accessToken)).statusCode, 204);
    assert.equal((await loginWith(ctx.app, user.username)).statusCode, 200);

    const events = async (userId: string, kinds: string[]) => {
      const res = await ctx.app.inject({
        method: 'GET',
        url: `/api/auth/admin/events?user_id=${userId}&limit=100`,
        headers: admin.auth,
      });
      return (res.json() as { kind: string; outcome: string; detail: string }[])
        .filter((e) => kinds.includes(e.kind))
        .map((e) => `${e.kind} ${e.outcome}: ${e.detail}`)
        .reverse();
    };
    assert.deepEqual(await events(user.userId, ['mfa_enrol', 'login']), [
      `login success: session ${(await sessionIds(ctx, user.userId))[0]}`,
      'mfa_enrol success: authenticator app; 10 recovery codes',
      'login failure: one-time code required',
      `login success: session ${(await sessionIds(ctx, user.userId))[1]}`,
    ]);
    assert.deepEqual(await events(admin.userId, ['admin_remove_mfa']), [
      `admin_remove_mfa failure: user 00000000-0000-4000-8000-000000000000 not found`,
      `admin_remove_mfa success: user ${user.userId}: authenticator app, recovery codes and 0 passkeys removed`,
    ]);
  });

  test('sign out everywhere else: every other session ends, this one goes on with new tokens', async () => {
    const user = await enrolledUser(ctx.app);
    clock.tick(STEP_MS);
    const other = await loginWith(ctx.app, user.username, totpCode(user.secret));
    const otherRefresh = setCookies(other).get(REFRESH)!.value;
    const res = await post(ctx.app, '/api/auth/sessions/end-others', user.accessToken, { password: GOOD_PASSWORD });
    assert.equal(res.statusCode, 200, res.body);
    const refresh = setCookies(res).get(REFRESH)!.value;
    assert.equal((await refreshSession(ctx.app, otherRefresh)).statusCode, 401);
    assert.equal((await refreshSession(ctx.app, user.refreshToken)).statusCode, 401);
    assert.equal((await refreshSession(ctx.app, refresh)).statusCode, 200);
    const sessions = await ctx.app.inject({
      method: 'GET',
      url: '/api/auth/sessions',
      headers: bearer(res.json().access_token),
    });
    assert.equal(sessions.json().length, 1);
  });
});

/** Session ids of the user's logins, oldest first. */
async function sessionIds(
  ctx: { database: { db: import('../../src/db/schema.js').Db } },
  userId: string,
): Promise<string[]> {
  const rows = await ctx.database.db
    .selectFrom('refresh_tokens')
    .select(['family_id', 'created_at'])
    .where('user_id', '=', userId)
    .where('parent_id', 'is', null)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.family_id);
}

function oathtoolMissing(): string | false {
  try {
    execFileSync('oathtool', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'oathtool is not installed (apt-get install oathtool; .ci/run installs it)';
  }
}
