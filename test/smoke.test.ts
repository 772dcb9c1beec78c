import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from './helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, uniqueName } from './helpers/harness.js';

forEachDatabase('smoke', (ctx) => {
  test('signup, login, me: /me names the account that signup created and the token was issued for', async () => {
    const username = uniqueName('smoke');
    const signup = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { username, password: GOOD_PASSWORD },
    });
    assert.equal(signup.statusCode, 201, signup.body);
    const created = signup.json() as { id: string; username: string };
    assert.equal(created.username, username);

    const login = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: GOOD_PASSWORD },
    });
    assert.equal(login.statusCode, 200, login.body);
    const token = (login.json() as { access_token: string }).access_token;
    assert.equal(decodeJwt(token).payload.sub, created.id, 'the token is issued for the account signup created');

    const me = await ctx.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().id, created.id);
    assert.equal(me.json().username, username);
  });
});
