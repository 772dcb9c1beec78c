import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, uniqueName } from '../helpers/harness.js';
import { assertThrottled, loginAttempt, THROTTLE_ON } from './support.js';

const WRONG = 'not-the-password-at-all-1234';
const PROXY = '10.0.0.2';

forEachDatabase('security: X-Forwarded-For and the per-address limits', (ctx) => {
  const attempt = (remoteAddress: string, forwardedFor?: string) =>
    loginAttempt(ctx.app, uniqueName('ghost'), WRONG, {
      remoteAddress,
      ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }),
    });

  test('not trusted by default: a new X-Forwarded-For on every request does not dodge the limit', async () => {
    await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    for (let i = 1; i <= 3; i++) assert.equal((await attempt('198.51.100.1', `203.0.113.${i}`)).statusCode, 401);
    assertThrottled(await attempt('198.51.100.1', '203.0.113.99'), 60);
    assertThrottled(await attempt('198.51.100.1'), 60);
  });

  test('not trusted by default: naming someone else in X-Forwarded-For does not use up their budget', async () => {
    await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    for (let i = 0; i < 5; i++) await attempt('198.51.100.66', '198.51.100.7');
    assertThrottled(await attempt('198.51.100.66'), 60);
    // The address that was named is untouched.
    assert.equal((await attempt('198.51.100.7')).statusCode, 401);
    assert.equal((await attempt('198.51.100.7', '198.51.100.66')).statusCode, 401);
  });

  test('TRUST_PROXY=on: clients behind the proxy are counted by their forwarded address', async () => {
    await ctx.rebuild({ ...THROTTLE_ON, TRUST_PROXY: 'on', RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    for (let i = 0; i < 3; i++) assert.equal((await attempt(PROXY, '203.0.113.10')).statusCode, 401);
    assertThrottled(await attempt(PROXY, '203.0.113.10'), 60);
    // Another client through the same proxy has its own budget.
    assert.equal((await attempt(PROXY, '203.0.113.11')).statusCode, 401);
  });

  test('TRUST_PROXY=on: only the hop our proxy added is believed, not what the client wrote before it', async () => {
    await ctx.rebuild({ ...THROTTLE_ON, TRUST_PROXY: 'on', RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    // The proxy appends the address it saw to whatever the client sent.
    for (let i = 1; i <= 3; i++) assert.equal((await attempt(PROXY, `192.0.2.${i}, 203.0.113.20`)).statusCode, 401);
    assertThrottled(await attempt(PROXY, '192.0.2.99, 203.0.113.20'), 60);
    assert.equal((await attempt(PROXY, '203.0.113.20, 203.0.113.21')).statusCode, 401);
  });

  test('TRUST_PROXY=on: IPv6 clients are counted per /64, as one household or host', async () => {
    await ctx.rebuild({ ...THROTTLE_ON, TRUST_PROXY: 'on', RATE_LIMIT_LOGIN_PER_MINUTE: '2' });
    assert.equal((await attempt(PROXY, '2001:db8:1:2::1')).statusCode, 401);
    assert.equal((await attempt(PROXY, '2001:db8:1:2::ffff')).statusCode, 401);
    assertThrottled(await attempt(PROXY, '2001:db8:1:2:abcd::7'), 60);
    assert.equal((await attempt(PROXY, '2001:db8:1:3::1')).statusCode, 401);
  });
});
