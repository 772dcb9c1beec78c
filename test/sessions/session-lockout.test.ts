import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { createMemoryStore } from '../../src/http/throttle-store.js';
import { sessionFailures } from '../../src/sessions/login-throttle.js';
import { checkInSession } from '../../src/sessions/session-lockout.js';
import { forEachDatabase, login, signup } from '../helpers/harness.js';
import { decodeJwt } from '../helpers/auth.js';

/**
 * The one case no request reaches: past session binding (http/access.ts) every access token on
 * /api/auth names a stored session. Should the look-up still find none (the session's rows deleted
 * in between), the check fails closed: 401 as an ended session, and the secret is not checked,
 * since there is nothing to count the attempt against.
 */
forEachDatabase('session lockout: an access token without a session', (ctx) => {
  test('401 Unauthorized, without checking the secret', async () => {
    const session = await login(ctx.app, (await signup(ctx.app)).username);
    const issued = decodeJwt(session.accessToken).payload as {
      sub: string;
      jti: string;
      iat: number;
      nbf: number;
      exp: number;
    };
    const s = { db: ctx.database.db, log: ctx.app.log, sessionFailures: sessionFailures(createMemoryStore(), 3) };
    let checked = 0;
    const check = async () => {
      checked += 1;
      return true;
    };

    const known = { ...issued, admin: false, type: 'access' as const };
    assert.equal(await checkInSession(s, known, check), true, 'its own session: checked');
    assert.equal(checked, 1);
    await assert.rejects(checkInSession(s, { ...known, jti: randomUUID() }, check), {
      status: 401,
      code: 'unauthorized',
      detail: 'Unauthorized',
    });
    assert.equal(checked, 1, 'no session, no check');
  });
});
