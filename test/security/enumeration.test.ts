import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { forEachDatabase, GOOD_PASSWORD, signup, uniqueName } from '../helpers/harness.js';
import { loginAttempt, THROTTLE_ON } from './support.js';

const WRONG = 'not-the-password-at-all-1234';

/** Everything a client can see, minus what differs on every response anyway. */
function visible(res: LightMyRequestResponse) {
  const { date: _date, 'x-request-id': _id, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: res.body };
}

forEachDatabase('security: account enumeration', (ctx) => {
  test('an unknown username and a wrong password give the same status, headers and body', async () => {
    const app = await ctx.rebuild();
    const { username } = await signup(app);
    const known = await loginAttempt(app, username, WRONG);
    const unknown = await loginAttempt(app, uniqueName('nobody'), WRONG);
    assert.equal(known.statusCode, 401);
    assert.deepEqual(visible(unknown), visible(known));
    assert.equal(known.json().detail, 'Invalid credentials');
    // Upper case is the same account, not a different answer.
    assert.deepEqual(visible(await loginAttempt(app, username.toUpperCase(), WRONG)), visible(known));
  });

  test('so does a password too long to be checked', async () => {
    const app = await ctx.rebuild();
    const { username } = await signup(app);
    const long = 'x'.repeat(300);
    assert.deepEqual(
      visible(await loginAttempt(app, username, long)),
      visible(await loginAttempt(app, uniqueName('nobody'), long)),
    );
  });

  test('with throttling on, an unknown username is locked out exactly like an existing one', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_FAILURES: '3' });
    const ghost = uniqueName('nobody');
    const run = async (name: string) => {
      const out = [];
      for (let i = 0; i < 5; i++) out.push(visible(await loginAttempt(app, name, WRONG)));
      return out;
    };
    const [real, fake] = [await run(username), await run(ghost)];
    assert.deepEqual(
      real.map((r) => r.status),
      [401, 401, 401, 429, 429],
    );
    assert.deepEqual(fake, real);
  });

  test('signup answers 409 for a taken name (spec §4.1 rule 1), so probing it is throttled per address', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_SIGNUP_PER_HOUR: '2' });
    const attempt = () =>
      app.inject({ method: 'POST', url: '/api/auth/signup', payload: { username, password: GOOD_PASSWORD } });
    assert.equal((await attempt()).statusCode, 409);
    assert.equal((await attempt()).statusCode, 409);
    assert.equal((await attempt()).statusCode, 429);
  });
});
