import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, getCsrf, postRefresh, REFRESH } from '../helpers/auth.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';

const HOST = 'notes.example.com';
const TRUSTED = 'https://app.example.org';

forEachDatabase('refresh origin check', (ctx) => {
  test('development: no origin check (spec §5.8), a foreign Origin passes', async () => {
    const s = await newSession(ctx.app);
    const res = await postRefresh(ctx.app, s.refreshToken, await getCsrf(ctx.app, s.refreshToken), {
      host: HOST,
      origin: 'https://evil.example',
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('production: a foreign or missing origin is 403 before anything else, and spends nothing', async () => {
    const app = await ctx.rebuild({ NODE_ENV: 'production', TRUSTED_ORIGINS: `${TRUSTED}, https://other.example.org` });
    const s = await newSession(app);
    const csrf = await getCsrf(app, s.refreshToken);
    const refused: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: `http://${HOST}` },
      { origin: `https://${HOST}:8443` },
      { origin: `https://${HOST}.evil.example` },
      { origin: 'null' },
      { origin: 'https://app.example.org.evil.example' },
      {},
      { referer: 'https://evil.example/page' },
      { referer: 'not a url' },
    ];
    for (const headers of refused) {
      const res = await postRefresh(app, s.refreshToken, csrf, { host: HOST, ...headers });
      assertProblem(res, 403, 'Origin not allowed');
      assert.equal(res.headers['set-cookie'], undefined);
    }
    // Before the CSRF check: no CSRF token at all still gets the origin's answer.
    assertProblem(
      await postRefresh(app, s.refreshToken, undefined, { host: HOST, origin: 'https://evil.example' }),
      403,
      'Origin not allowed',
    );
    const ok = await postRefresh(app, s.refreshToken, csrf, { host: HOST, origin: `https://${HOST}` });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('production: the own HTTPS origin, a trusted origin or a same-origin Referer pass the origin step', async () => {
    const app = await ctx.rebuild({ NODE_ENV: 'production', TRUSTED_ORIGINS: `${TRUSTED}, https://other.example.org` });
    const s = await newSession(app);
    const csrf = await getCsrf(app, s.refreshToken);
    let token = s.refreshToken;
    const passing: Array<Record<string, string>> = [
      { origin: `https://${HOST}` },
      { origin: TRUSTED },
      { origin: 'https://other.example.org' },
      { referer: `https://${HOST}/notes/123?x=1` },
      { referer: `${TRUSTED}/` },
    ];
    for (const headers of passing) {
      // Passing the origin step lands on the CSRF check...
      const noCsrf = await postRefresh(app, token, undefined, { host: HOST, ...headers });
      assertProblem(noCsrf, 403, 'Invalid CSRF token');
      // ...and with a CSRF token the refresh goes through.
      const res = await postRefresh(app, token, csrf, { host: HOST, ...headers });
      assert.equal(res.statusCode, 200, `${JSON.stringify(headers)}: ${res.body}`);
      token = res.cookies.find((c) => c.name === REFRESH)!.value;
    }
  });

  test('production: GET /auth/cookie/csrf is a safe method and is not origin-checked', async () => {
    const app = await ctx.rebuild({ NODE_ENV: 'production' });
    const s = await newSession(app);
    const res = await app.inject({
      method: 'GET',
      url: '/api/auth/cookie/csrf',
      headers: { host: HOST, origin: 'https://evil.example' },
      cookies: { [REFRESH]: s.refreshToken },
    });
    assert.equal(res.statusCode, 204);
  });
});
