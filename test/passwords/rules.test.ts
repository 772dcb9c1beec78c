import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, uniqueName } from '../helpers/harness.js';

/** GET /api/auth/password-rules: what the client shows as the user types comes from the configuration. */
forEachDatabase('password rules served to clients', (ctx) => {
  test('the defaults, without credentials', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/password-rules' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), {
      min_length: 15,
      max_length: 256,
      min_entropy_bits: 60,
      breach_check: 'offline-list',
    });
  });

  test('configured rules are the ones served, and the ones signup applies', async () => {
    await ctx.rebuild({
      PASSWORD_MIN_LENGTH: '20',
      PASSWORD_MIN_ENTROPY: '80',
      PWNED_PASSWORDS_URL: 'http://127.0.0.1:9',
    });
    const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/password-rules' });
    assert.deepEqual(res.json(), { min_length: 20, max_length: 256, min_entropy_bits: 80, breach_check: 'range-api' });
    const short = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { username: uniqueName(), password: 'violet-Harbor-42ab' },
    });
    assert.equal(short.statusCode, 400);
    assert.match(short.json<{ detail: string }>().detail, /at least 20 characters/);
  });
});
