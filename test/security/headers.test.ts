import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { forEachDatabase, GOOD_PASSWORD, newSession, problemOf } from '../helpers/harness.js';
import { THROTTLE_ON } from './support.js';

const APP_ORIGIN = 'https://notes.example.com';

function assertSecurityHeaders(res: LightMyRequestResponse, what: string): void {
  const h = res.headers;
  assert.equal(h['x-content-type-options'], 'nosniff', what);
  assert.equal(h['referrer-policy'], 'no-referrer', what);
  const csp = String(h['content-security-policy']);
  assert.match(csp, /default-src 'none'/, what);
  assert.match(csp, /frame-ancestors 'none'/, what);
  assert.equal(h['x-frame-options'], 'DENY', what);
  assert.equal(h['x-powered-by'], undefined, what);
}

forEachDatabase('security: headers and CORS', (ctx) => {
  test('security headers on successes, errors, 404s and requests refused before routing', async () => {
    const app = await ctx.rebuild();
    const s = await newSession(app, 'hdr');
    const created = await app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: s.auth,
      payload: { title: 't', content: 'c' },
    });
    const cases: Array<[string, LightMyRequestResponse]> = [
      ['created note', created],
      ['note', await app.inject({ url: `/api/notes/${created.json().id}`, headers: s.auth })],
      ['me', await app.inject({ url: '/api/auth/me', headers: s.auth })],
      ['health', await app.inject({ url: '/healthz' })],
      ['401', await app.inject({ url: '/api/notes' })],
      [
        '400 bad JSON',
        await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: '{',
        }),
      ],
      [
        '415',
        await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          headers: { 'content-type': 'text/plain' },
          payload: 'x',
        }),
      ],
      [
        '413',
        await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: 'a', password: 'x'.repeat(40_000) },
        }),
      ],
      ['404 note', await app.inject({ url: '/api/notes/00000000-0000-4000-8000-000000000000', headers: s.auth })],
      ['404 route', await app.inject({ url: '/api/no/such/thing' })],
      ['bad URL', await app.inject({ url: '/api/notes/%E0%A4%A' })],
      ['long id', await app.inject({ url: `/api/notes/${'a'.repeat(500)}`, headers: s.auth })],
    ];
    for (const [what, res] of cases) {
      assertSecurityHeaders(res, what);
      if (res.statusCode >= 400) problemOf(res);
    }
    assert.equal(cases.find(([w]) => w === 'bad URL')![1].statusCode, 400);
    assert.equal(problemOf(cases.find(([w]) => w === 'long id')![1]).detail, 'Invalid note ID');
  });

  test('security headers on a 429', async () => {
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_GLOBAL_PER_MINUTE: '1' });
    await app.inject({ url: '/api/notes' });
    const res = await app.inject({ url: '/api/notes' });
    assert.equal(res.statusCode, 429);
    assertSecurityHeaders(res, '429');
  });

  test('Cache-Control: no-store on every account, session and token answer, errors and unknown paths included', async () => {
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_PER_MINUTE: '3' });
    const s = await newSession(app, 'cache');
    const responses = [
      await app.inject({ url: '/api/auth/me', headers: s.auth }),
      await app.inject({ url: '/api/auth/me' }),
      await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: s.username } }),
      await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: s.username, password: 'wrong-wrong-wrong' },
      }),
      await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: s.username, password: GOOD_PASSWORD },
      }),
      await app.inject({ url: '/api/auth/no-such-route' }),
      await app.inject({ url: '/api/auth/admin/all', headers: s.auth }),
    ];
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      [200, 401, 400, 401, 429, 404, 403],
    );
    for (const res of responses)
      assert.equal(res.headers['cache-control'], 'no-store', `${res.statusCode} ${res.body}`);
  });

  test('HSTS only in production', async () => {
    assert.equal(
      (await (await ctx.rebuild()).inject({ url: '/healthz' })).headers['strict-transport-security'],
      undefined,
    );
    const app = await ctx.rebuild({ NODE_ENV: 'production' });
    assert.match(String((await app.inject({ url: '/healthz' })).headers['strict-transport-security']), /max-age=\d+/);
  });

  test('request, header and keep-alive time-outs are set on the server', async () => {
    const server = (await ctx.rebuild()).server;
    assert.equal(server.requestTimeout, 30_000);
    // Slow headers (slowloris) are cut by whichever comes first; the request time-out bounds both.
    assert.ok(Math.min(server.headersTimeout, server.requestTimeout) <= 30_000);
    assert.equal(server.keepAliveTimeout, 72_000);
    assert.equal(server.timeout, 60_000);
  });

  test('no CORS by default: no CORS headers, and a preflight is a plain 405 (the path has no OPTIONS)', async () => {
    const app = await ctx.rebuild();
    const get = await app.inject({ url: '/healthz', headers: { origin: APP_ORIGIN } });
    assert.equal(get.headers['access-control-allow-origin'], undefined);
    assert.equal(get.headers['access-control-allow-credentials'], undefined);
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/notes',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.statusCode, 405);
    assert.equal(preflight.headers.allow, 'GET, HEAD, POST');
    problemOf(preflight);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
  });

  test('CORS_ORIGINS: a listed origin is allowed, with credentials', async () => {
    const app = await ctx.rebuild({ CORS_ORIGINS: `${APP_ORIGIN}, https://other.example.org` });
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/notes',
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
    assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/i);
    assert.match(String(preflight.headers['access-control-allow-headers']), /X-CSRF-Token/i);
    assertSecurityHeaders(preflight, 'preflight');

    const get = await app.inject({ url: '/api/notes', headers: { origin: APP_ORIGIN } });
    assert.equal(get.statusCode, 401);
    assert.equal(get.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(get.headers['access-control-allow-credentials'], 'true');
    assert.match(String(get.headers.vary), /Origin/i);
    // A cross-origin client must be able to read these.
    for (const name of ['ETag', 'Location', 'Retry-After', 'X-CSRF-Token', 'X-Total-Count']) {
      assert.match(String(get.headers['access-control-expose-headers']), new RegExp(name, 'i'));
    }
  });

  test('CORS_ORIGINS: any other origin gets no CORS headers at all, and its preflight is refused', async () => {
    const app = await ctx.rebuild({ CORS_ORIGINS: APP_ORIGIN });
    for (const origin of [
      'https://evil.example',
      `${APP_ORIGIN}.evil.example`,
      'http://notes.example.com',
      'null',
      `${APP_ORIGIN}:8443`,
    ]) {
      const get = await app.inject({ url: '/api/notes', headers: { origin } });
      assert.equal(get.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(get.headers['access-control-allow-credentials'], undefined, origin);
      const preflight = await app.inject({
        method: 'OPTIONS',
        url: '/api/auth/login',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      assert.equal(preflight.statusCode, 405, origin);
      assert.equal(preflight.headers.allow, 'POST', origin);
      problemOf(preflight);
      assert.equal(preflight.headers['access-control-allow-origin'], undefined, origin);
    }
  });

  test('CORS_ORIGINS must hold origins', async () => {
    await assert.rejects(() => ctx.rebuild({ CORS_ORIGINS: 'not a url' }), /CORS_ORIGINS/);
    await ctx.rebuild();
  });
});
