import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { forEachDatabase, GOOD_PASSWORD, newSession, uniqueName } from '../helpers/harness.js';
import { assertThrottled, loginAttempt, THROTTLE_ON } from '../security/support.js';

/**
 * Issue #37, finding 8: five anonymous PROPFINDs with `Basic victim:vlm_garbage` locked the
 * victim's web login (60 s, doubling to an hour), and with no per-address limit one address could
 * lock a hundred accounts a minute. WebDAV takes only personal tokens (190+ random bits, never the
 * password), so its failures guess nothing the lockout protects: they no longer count against the
 * account, and a lock does not stop its tokens. They count against a per-address budget as large
 * as the login budget (RATE_LIMIT_LOGIN_PER_MINUTE), 429 with Retry-After past it. Review of #37:
 * that budget was the login one itself, so a sync client polling with a revoked token got everyone
 * behind its address 429 at /auth/login; now the two are apart.
 */
const ATTACKER = '192.0.2.66';
const ELSEWHERE = '198.51.100.7';

forEachDatabase('WebDAV credential failures', (ctx) => {
  const basic = (username: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${username}:${secret}`).toString('base64')}`,
  });
  const propfind = (app: FastifyInstance, headers: Record<string, string>, remoteAddress: string) =>
    app.inject({ method: 'PROPFIND', url: '/dav/', headers: { depth: '0', ...headers }, remoteAddress });

  /** An account with a dav token, made with throttling off; then the app rebuilt with `env`. */
  async function victimThen(env: Record<string, string>) {
    const app = await ctx.rebuild();
    const victim = await newSession(app, 'victim');
    const res = await app.inject({
      method: 'POST',
      url: '/api/auth/tokens',
      headers: victim.auth,
      payload: { name: 'dav', scopes: ['dav'], password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { victim, token: res.json().token as string, app: await ctx.rebuild({ ...THROTTLE_ON, ...env }) };
  }

  test('bad DAV credentials never lock the web login, where as many bad passwords do', async () => {
    const { victim, app } = await victimThen({ RATE_LIMIT_LOGIN_FAILURES: '5' });
    for (let i = 0; i < 10; i++)
      assert.equal((await propfind(app, basic(victim.username, 'vlm_garbage'), ATTACKER)).statusCode, 401);
    assert.equal(
      (await loginAttempt(app, victim.username, GOOD_PASSWORD, { remoteAddress: ELSEWHERE })).statusCode,
      200,
    );
    // The same number of /auth/login failures from that address: locked, as before.
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await loginAttempt(app, victim.username, 'wrong-password-1234', { remoteAddress: ATTACKER })).statusCode,
        401,
      );
    assertThrottled(await loginAttempt(app, victim.username, GOOD_PASSWORD, { remoteAddress: ELSEWHERE }), 60);
    await ctx.rebuild();
  });

  test("past the address's DAV budget a DAV failure is 429 with Retry-After; the address's web login is not spent", async () => {
    const { victim, app } = await victimThen({ RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    // Spraying other people's names: each is one failure of this address.
    for (let i = 0; i < 3; i++)
      assert.equal((await propfind(app, basic(uniqueName('someone'), 'vlm_garbage'), ATTACKER)).statusCode, 401);
    assertThrottled(await propfind(app, basic(uniqueName('someone'), 'vlm_garbage'), ATTACKER), 60);
    assertThrottled(await propfind(app, { authorization: 'Bearer vlm_garbage' }, ATTACKER), 60);
    // A sync client with a revoked token is this address too: the people behind it still log in.
    assert.equal(
      (await loginAttempt(app, victim.username, GOOD_PASSWORD, { remoteAddress: ATTACKER })).statusCode,
      200,
    );
    // Another address has its own budget.
    assert.equal((await propfind(app, basic(victim.username, 'vlm_garbage'), ELSEWHERE)).statusCode, 401);
    await ctx.rebuild();
  });

  test("web logins do not spend an address's DAV budget either", async () => {
    const { victim, app } = await victimThen({ RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await loginAttempt(app, uniqueName('someone'), 'wrong-password-1234', { remoteAddress: ATTACKER })).statusCode,
        401,
      );
    assertThrottled(await loginAttempt(app, victim.username, GOOD_PASSWORD, { remoteAddress: ATTACKER }), 60);
    assert.equal((await propfind(app, basic(victim.username, 'vlm_garbage'), ATTACKER)).statusCode, 401);
    await ctx.rebuild();
  });

  test("a good token keeps working while an address fails on its name, even past that address's budget and during a lockout", async () => {
    const { victim, token, app } = await victimThen({
      RATE_LIMIT_LOGIN_PER_MINUTE: '5',
      RATE_LIMIT_LOGIN_FAILURES: '3',
    });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await propfind(app, basic(victim.username, 'vlm_garbage'), ATTACKER)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    assert.equal((await propfind(app, basic(victim.username, token), ELSEWHERE)).statusCode, 207);
    // Only failures are counted: a client that shares the attacker's address is not cut off.
    assert.equal((await propfind(app, basic(victim.username, token), ATTACKER)).statusCode, 207);
    // A lockout from password guesses guards the password, which WebDAV never takes.
    for (let i = 0; i < 3; i++)
      await loginAttempt(app, victim.username, 'wrong-password-1234', { remoteAddress: ELSEWHERE });
    assertThrottled(await loginAttempt(app, victim.username, GOOD_PASSWORD, { remoteAddress: ELSEWHERE }), 60);
    assert.equal((await propfind(app, basic(victim.username, token), ELSEWHERE)).statusCode, 207);
    await ctx.rebuild();
  });
});
