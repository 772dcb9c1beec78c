import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import {
  bearer,
  CSRF_SECRET_COOKIE,
  decodeJwt,
  EXPIRES,
  getCsrf,
  nowSeconds,
  postRefresh,
  REFRESH,
  setCookies,
  type RawCookie,
} from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, signup } from '../helpers/harness.js';

const OTHER_PASSWORD = 'amber-Falcon-meadow-77-softly-x';
const HOST = 'notes.example.com';
/** The production origin check wants the request's own HTTPS origin; harmless elsewhere. */
const SAME_ORIGIN = { host: HOST, origin: `https://${HOST}` };

interface Mode {
  name: string;
  env: Record<string, string>;
  secure: boolean;
  domain?: string;
}

const MODES: Mode[] = [
  { name: 'development', env: {}, secure: false },
  { name: 'NODE_ENV=test', env: { NODE_ENV: 'test' }, secure: false },
  { name: 'production', env: { NODE_ENV: 'production' }, secure: true },
  { name: 'COOKIE_DOMAIN set', env: { COOKIE_DOMAIN: HOST }, secure: false, domain: HOST },
  {
    name: 'production with COOKIE_DOMAIN',
    env: { NODE_ENV: 'production', COOKIE_DOMAIN: 'example.com' },
    secure: true,
    domain: 'example.com',
  },
];

/** Attributes common to every cookie of the mode: SameSite=Strict, Secure and Domain as configured. */
function common(mode: Mode): Record<string, string | true> {
  return {
    samesite: 'Strict',
    ...(mode.secure ? { secure: true } : {}),
    ...(mode.domain ? { domain: mode.domain } : {}),
  };
}

/** Spec §5.6, exactly: no attribute more, none less. */
function assertIssued(res: LightMyRequestResponse, mode: Mode): { refresh: string; expiresAt: string } {
  const cookies = setCookies(res);
  assert.deepEqual([...cookies.keys()].sort(), [EXPIRES, REFRESH]);
  const refresh = cookies.get(REFRESH)!;
  const view = cookies.get(EXPIRES)!;
  assert.deepEqual(refresh.attributes, {
    'max-age': '604800',
    path: '/api/auth/cookie',
    httponly: true,
    ...common(mode),
  });
  assert.deepEqual(view.attributes, { 'max-age': '604800', path: '/', ...common(mode) });
  assert.equal(decodeJwt(refresh.value).payload.type, 'refresh');
  assert.equal(view.value, String(decodeJwt(refresh.value).payload.exp));
  return { refresh: refresh.value, expiresAt: view.value };
}

/** Immediate expiry: Max-Age=0 and, if Expires is sent too, a date in the past. */
function withoutExpires(cookie: RawCookie): Record<string, string | true> {
  const { expires, ...rest } = cookie.attributes;
  if (expires !== undefined) assert.ok(Date.parse(String(expires)) <= Date.now(), `Expires ${String(expires)} is past`);
  return rest;
}

/** Spec §5.7: an empty refresh cookie and a view cookie holding the current time, both expiring now. */
function assertCleared(res: LightMyRequestResponse, mode: Mode, before: number): void {
  const after = nowSeconds();
  const cookies = setCookies(res);
  assert.deepEqual([...cookies.keys()].sort(), [EXPIRES, REFRESH]);
  const refresh = cookies.get(REFRESH)!;
  const view = cookies.get(EXPIRES)!;
  assert.equal(refresh.value, '');
  assert.deepEqual(withoutExpires(refresh), {
    'max-age': '0',
    path: '/api/auth/cookie',
    httponly: true,
    ...common(mode),
  });
  assert.match(view.value, /^\d+$/);
  assert.ok(
    Number(view.value) >= before && Number(view.value) <= after,
    `view cookie ${view.value} is the current time`,
  );
  assert.deepEqual(withoutExpires(view), { 'max-age': '0', path: '/', ...common(mode) });
}

forEachDatabase('auth cookies', (ctx) => {
  for (const mode of MODES) {
    test(`${mode.name}: set on login, CSRF, refresh and password change; cleared on logout and deletion`, async () => {
      const app = await ctx.rebuild(mode.env);
      const { username } = await signup(app);
      const login = async (password: string) => {
        const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
        assert.equal(res.statusCode, 200, res.body);
        return { res, access: res.json().access_token as string, ...assertIssued(res, mode) };
      };
      const first = await login(GOOD_PASSWORD);

      const csrfRes = await app.inject({
        method: 'GET',
        url: '/api/auth/cookie/csrf',
        cookies: { [REFRESH]: first.refresh },
      });
      assert.equal(csrfRes.statusCode, 204);
      assert.equal(csrfRes.body, '');
      const csrfCookies = setCookies(csrfRes);
      assert.deepEqual([...csrfCookies.keys()], [CSRF_SECRET_COOKIE]);
      assert.deepEqual(csrfCookies.get(CSRF_SECRET_COOKIE)!.attributes, {
        path: '/api/auth/cookie',
        httponly: true,
        ...common(mode),
      });

      const refreshed = await postRefresh(app, first.refresh, await getCsrf(app, first.refresh), SAME_ORIGIN);
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.notEqual(assertIssued(refreshed, mode).refresh, first.refresh);

      const url = MODES.indexOf(mode) % 2 === 0 ? '/api/auth/owner/' : '/api/auth/owner';
      const payload = { old_password: GOOD_PASSWORD, new_password: OTHER_PASSWORD };
      const put = await app.inject({ method: 'PUT', url, headers: bearer(first.access), payload });
      assert.equal(put.statusCode, 200, put.body);
      assertIssued(put, mode);

      const before = nowSeconds();
      // The password change ended the first session, and with it first.access on /api/auth: the new token logs out.
      const logout = await app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        headers: bearer(put.json().access_token as string),
      });
      assert.equal(logout.statusCode, 204);
      assertCleared(logout, mode, before);

      const second = await login(OTHER_PASSWORD);
      const del = await app.inject({
        method: 'DELETE',
        url,
        headers: bearer(second.access),
        payload: { password: OTHER_PASSWORD },
      });
      assert.equal(del.statusCode, 204, del.body);
      assertCleared(del, mode, before);
    });
  }

  test('failures set no cookies', async () => {
    const app = await ctx.rebuild();
    const { username } = await signup(app);
    const wrong = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: OTHER_PASSWORD },
    });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.headers['set-cookie'], undefined);
    const noCsrf = await postRefresh(app, 'x', undefined);
    assert.equal(noCsrf.statusCode, 403);
    assert.equal(noCsrf.headers['set-cookie'], undefined);
  });
});
