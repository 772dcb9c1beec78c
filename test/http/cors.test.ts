import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession, problemOf } from '../helpers/harness.js';

const APP_ORIGIN = 'https://notes.example.com';

function methods(header: unknown): string[] {
  return String(header)
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '')
    .sort();
}

forEachDatabase('HTTP: CORS preflights allow the methods the routes have', (ctx) => {
  test('PATCH /api/notes/{id}/{versionID} from an allowed origin: preflight allows it, and the PATCH is answered with CORS headers', async () => {
    const app = await ctx.rebuild({ CORS_ORIGINS: APP_ORIGIN });
    const s = await newSession(app, 'cors');
    const note = (
      await app.inject({ method: 'POST', url: '/api/notes', headers: s.auth, payload: { title: 't', content: 'c' } })
    ).json();
    const url = `/api/notes/${note.id}/${note.version_id}`;
    const preflight = await app.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
    // Exactly what this path has (GET answers HEAD too), PATCH among them.
    assert.deepEqual(methods(preflight.headers['access-control-allow-methods']), ['GET', 'HEAD', 'PATCH']);

    const patched = await app.inject({
      method: 'PATCH',
      url,
      headers: { ...s.auth, origin: APP_ORIGIN },
      payload: { label: 'draft' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().label, 'draft');
    assert.equal(patched.headers['access-control-allow-origin'], APP_ORIGIN);
  });

  test('each path gets its own methods; a path with no route gets none', async () => {
    const app = await ctx.rebuild({ CORS_ORIGINS: APP_ORIGIN });
    const preflight = (url: string, method: string) =>
      app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: APP_ORIGIN, 'access-control-request-method': method },
      });
    const id = '00000000-0000-4000-8000-000000000000';
    const expected: Array<[string, string[]]> = [
      ['/api/notes', ['GET', 'HEAD', 'POST']],
      [`/api/notes/${id}`, ['DELETE', 'GET', 'HEAD', 'PATCH']],
      ['/api/auth/login', ['POST']],
      ['/api/export?format=json', ['GET', 'HEAD']],
      ['/api/import', ['POST']],
      // The route the path matches, static segments first: not also GET /api/auth/admin/{id}.
      ['/api/auth/admin/all', ['GET', 'HEAD']],
      [`/api/auth/admin/${id}`, ['DELETE', 'GET', 'HEAD', 'PATCH']],
      ['/api/notes/search', ['GET', 'HEAD']],
      [`/api/notes/${id}/versions`, ['GET', 'HEAD', 'POST']],
      ['/api/no/such/thing', []],
    ];
    for (const [url, allowed] of expected) {
      const res = await preflight(url, 'PATCH');
      assert.equal(res.statusCode, 204, url);
      assert.deepEqual(methods(res.headers['access-control-allow-methods']), allowed, url);
    }
  });

  test('another origin still gets no CORS headers, and its PATCH preflight is refused', async () => {
    const app = await ctx.rebuild({ CORS_ORIGINS: APP_ORIGIN });
    const id = '00000000-0000-4000-8000-000000000000';
    const res = await app.inject({
      method: 'OPTIONS',
      url: `/api/notes/${id}/${id}`,
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'PATCH' },
    });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, PATCH');
    problemOf(res);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
  });
});
