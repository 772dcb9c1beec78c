import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from './helpers/harness.js';

forEachDatabase('smoke', (ctx) => {
  test('signup, login, me', async () => {
    const s = await newSession(ctx.app);
    const me = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: s.auth });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().id, s.userId);
  });
});
