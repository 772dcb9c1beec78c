import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { getCsrf, newAdminSession, postRefresh } from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, newSession, uniqueName } from '../helpers/harness.js';
import { Conformance, docOperations, noSlash, openApiDoc } from '../helpers/openapi-check.js';

/**
 * Every method + path in Fastify's own route tree, read from printRoutes() so that the check does
 * not depend on what the swagger plugin chose to see. Lines look like `│   └── /versions (GET, HEAD)`:
 * four characters of indentation per level, and each node's text continues its parent's path.
 */
function routesOf(app: FastifyInstance): Array<{ method: string; path: string }> {
  const stack: string[] = [];
  const routes: Array<{ method: string; path: string }> = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (m === null) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    for (const method of m[3]?.split(', ') ?? []) routes.push({ method, path: stack.join('') });
  }
  return routes;
}

const openApiPath = (path: string) => noSlash(path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'));

/** The /api routes the document must describe: not the docs UI, not the document itself. */
function apiRoutes(app: FastifyInstance) {
  const routes = routesOf(app).filter(
    ({ path }) => path.startsWith('/api/') && !path.startsWith('/api/docs') && path !== '/api/openapi.json',
  );
  // HEAD routes are the ones Fastify adds for every GET (exposeHeadRoutes); GET documents them.
  const gets = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.path));
  return routes.filter((r) => !(r.method === 'HEAD' && gets.has(r.path)));
}

forEachDatabase('OpenAPI document', (ctx) => {
  test('GET /api/openapi.json is OpenAPI 3.1.0 with the bearer and refreshCookie schemes', async () => {
    const doc = await openApiDoc(ctx.app);
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['bearer', 'refreshCookie']);
    // Shared schemas are named after their $id, not def-0, def-1, ...
    for (const name of ['User', 'NoteRow', 'VersionRow'])
      assert.ok(doc.components.schemas?.[name], `components.schemas.${name}`);
    assert.deepEqual(doc.components.securitySchemes.bearer, {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'access token from login or refresh (15 minutes)',
    });
    assert.deepEqual(
      { ...(doc.components.securitySchemes.refreshCookie as object), description: undefined },
      { type: 'apiKey', in: 'cookie', name: 'app.refresh_token', description: undefined },
    );
  });

  test('every /api route of the router is in the document, and nothing else is', async () => {
    const doc = await openApiDoc(ctx.app);
    const ops = docOperations(doc);
    const routes = apiRoutes(ctx.app);
    assert.ok(routes.length >= 15, `suspiciously few routes parsed: ${JSON.stringify(routes)}`);
    const missing = routes.map(({ method, path }) => `${method} ${openApiPath(path)}`).filter((key) => !ops.has(key));
    assert.deepEqual([...new Set(missing)], [], 'routes missing from the document');
    const routeKeys = new Set(routes.map(({ method, path }) => `${method} ${openApiPath(path)}`));
    assert.deepEqual(
      [...ops.keys()].filter((key) => !routeKeys.has(key)),
      [],
      'documented operations without a route',
    );
    // The ones whose paths differ only by a trailing slash are one operation in the document.
    assert.ok(ops.has('GET /api/notes') && ops.has('POST /api/notes'));
    // Operational endpoints stay out of the API document.
    for (const path of ['/healthz', '/readyz', '/metrics', '/api/openapi.json'])
      assert.equal(doc.paths[path], undefined, path);
  });

  test('every operation declares its error statuses as application/problem+json', async () => {
    const doc = await openApiDoc(ctx.app);
    for (const [key, op] of docOperations(doc)) {
      const statuses = Object.keys(op.responses ?? {}).map(Number);
      const secured = Array.isArray(op.security) && op.security.length > 0;
      for (const required of [400, 429, 500, 503, ...(secured ? [401] : [])]) {
        assert.ok(statuses.includes(required), `${key} does not declare ${required}`);
      }
      // Single sign-on's two routes are browser navigations: their success is a 302.
      assert.ok(
        statuses.some((s) => (s >= 200 && s < 300) || s === 302),
        `${key} declares no success status`,
      );
      for (const status of statuses.filter((s) => s >= 400)) {
        const content = op.responses![String(status)]!.content ?? {};
        assert.deepEqual(Object.keys(content), ['application/problem+json'], `${key} ${status}`);
        const schema = content['application/problem+json']!.schema as { required?: string[] };
        assert.deepEqual(
          [...(schema.required ?? [])].sort(),
          ['detail', 'status', 'title', 'type'],
          `${key} ${status}`,
        );
      }
    }
  });

  test('responses of a scripted session conform to the document', async () => {
    const doc = await openApiDoc(ctx.app);
    const conformance = new Conformance(doc);
    /** One request: it must answer `status`, and its response must match the document. */
    const call = async (status: number, options: InjectOptions & { method: string; url: string }) => {
      const res = await ctx.app.inject(options);
      assert.equal(res.statusCode, status, `${options.method} ${options.url}: ${res.body.slice(0, 300)}`);
      conformance.check(options.method, options.url, res);
      return res;
    };
    const json = { 'content-type': 'application/json' };

    // Accounts.
    const username = uniqueName('doc');
    await call(201, { method: 'POST', url: '/api/auth/signup', payload: { username, password: GOOD_PASSWORD } });
    await call(409, { method: 'POST', url: '/api/auth/signup', payload: { username, password: GOOD_PASSWORD } });
    await call(400, { method: 'POST', url: '/api/auth/signup', payload: { username: 'ab', password: GOOD_PASSWORD } });
    await call(413, {
      method: 'POST',
      url: '/api/auth/signup',
      headers: json,
      payload: JSON.stringify({ username, password: 'x'.repeat(20_000) }),
    });
    await call(415, {
      method: 'POST',
      url: '/api/auth/signup',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    await call(401, { method: 'POST', url: '/api/auth/login', payload: { username, password: `${GOOD_PASSWORD}x` } });
    const login = await call(200, {
      method: 'POST',
      url: '/api/auth/login?includeUser=true',
      payload: { username, password: GOOD_PASSWORD },
    });
    const auth = { authorization: `Bearer ${(login.json() as { access_token: string }).access_token}` };
    const refreshToken = login.cookies.find((c) => c.name === 'app.refresh_token')!.value;
    await call(200, { method: 'POST', url: '/api/auth/login', payload: { username, password: GOOD_PASSWORD } });
    await call(200, { method: 'GET', url: '/api/auth/me', headers: auth });
    await call(401, { method: 'GET', url: '/api/auth/me' });

    // Notes.
    const created = await call(201, {
      method: 'POST',
      url: '/api/notes',
      headers: auth,
      payload: { title: 'Doc', content: 'one' },
    });
    const note = created.json() as { id: string; version_id: string };
    await call(201, { method: 'POST', url: '/api/notes/', headers: auth, payload: {} });
    await call(200, { method: 'GET', url: '/api/notes', headers: auth });
    await call(200, { method: 'GET', url: '/api/notes/?limit=1', headers: auth });
    await call(400, { method: 'GET', url: '/api/notes?limit=0', headers: auth });
    await call(401, { method: 'GET', url: '/api/notes' });
    await call(200, { method: 'GET', url: `/api/notes/${note.id}`, headers: auth });
    await call(400, { method: 'GET', url: '/api/notes/not-a-uuid', headers: auth });
    await call(404, { method: 'GET', url: `/api/notes/${randomUUID()}`, headers: auth });
    const add = (status: number, ifMatch: string, payload: unknown) =>
      call(status, {
        method: 'POST',
        url: `/api/notes/${note.id}/versions`,
        headers: { ...auth, 'if-match': ifMatch },
        payload: payload as object,
      });
    await add(204, '"1"', { title: 'Doc', content: 'two' });
    await add(412, '"1"', { title: 'Doc', content: 'stale' });
    await add(400, '"2"', { title: 'Doc' });
    await add(413, '"2"', { title: 'Doc', content: 'x'.repeat(1024 * 1024 + 1) });
    await call(415, {
      method: 'POST',
      url: `/api/notes/${note.id}/versions`,
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'text',
    });
    await call(415, {
      method: 'POST',
      url: '/api/notes',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'text',
    });
    const versions = await call(200, { method: 'GET', url: `/api/notes/${note.id}/versions`, headers: auth });
    assert.equal((versions.json() as unknown[]).length, 2);
    await call(400, { method: 'GET', url: `/api/notes/${note.id}/versions?offset=-1`, headers: auth });
    await call(200, { method: 'GET', url: `/api/notes/${note.id}/${note.version_id}`, headers: auth });
    await call(404, { method: 'GET', url: `/api/notes/${note.id}/${randomUUID()}`, headers: auth });
    // Search.
    const found = await call(200, { method: 'GET', url: '/api/notes/search?q=two', headers: auth });
    assert.equal((found.json() as unknown[]).length, 1);
    const old = await call(200, { method: 'GET', url: '/api/notes/search?q=one&history=true&limit=5', headers: auth });
    assert.equal((old.json() as unknown[]).length, 1);
    await call(400, { method: 'GET', url: '/api/notes/search', headers: auth });
    await call(401, { method: 'GET', url: '/api/notes/search?q=x' });

    await call(204, { method: 'DELETE', url: `/api/notes/${note.id}`, headers: auth });
    await call(404, { method: 'DELETE', url: `/api/notes/${note.id}`, headers: auth });

    // Export and import.
    const exported = await call(200, { method: 'GET', url: '/api/export', headers: auth });
    await call(201, { method: 'POST', url: '/api/import', headers: { ...auth, ...json }, payload: exported.body });
    await call(400, {
      method: 'POST',
      url: '/api/import',
      headers: { ...auth, ...json },
      payload: '{"format":"other"}',
    });
    await call(400, { method: 'GET', url: '/api/export?format=pdf', headers: auth });

    // Trash.
    await call(200, { method: 'GET', url: '/api/trash', headers: auth });
    await call(400, { method: 'GET', url: '/api/trash?limit=101', headers: auth });
    await call(200, { method: 'POST', url: `/api/trash/${note.id}/restore`, headers: auth });
    await call(404, { method: 'POST', url: `/api/trash/${note.id}/restore`, headers: auth });
    await call(204, { method: 'DELETE', url: `/api/notes/${note.id}`, headers: auth });
    await call(204, { method: 'DELETE', url: `/api/trash/${note.id}`, headers: auth });
    await call(404, { method: 'DELETE', url: `/api/trash/${note.id}`, headers: auth });

    // Administration and cookies.
    await call(403, { method: 'GET', url: '/api/auth/admin/all', headers: auth });
    const admin = await newAdminSession(ctx);
    await call(200, { method: 'GET', url: '/api/auth/admin/all?limit=2', headers: admin.auth });
    await call(200, { method: 'GET', url: '/api/auth/admin/all?offset=100000', headers: admin.auth });
    await call(404, { method: 'DELETE', url: `/api/auth/admin/${randomUUID()}`, headers: admin.auth });
    const victim = await newSession(ctx.app, 'victim');
    await call(204, { method: 'DELETE', url: `/api/auth/admin/${victim.userId}`, headers: admin.auth });
    await call(401, { method: 'GET', url: '/api/auth/cookie/csrf' });
    await call(204, { method: 'GET', url: '/api/auth/cookie/csrf', cookies: { 'app.refresh_token': refreshToken } });
    const noCsrf = await postRefresh(ctx.app, refreshToken, undefined);
    conformance.check('POST', '/api/auth/cookie/refresh', noCsrf);
    assert.equal(noCsrf.statusCode, 403);
    const refreshed = await postRefresh(ctx.app, refreshToken, await getCsrf(ctx.app, refreshToken));
    conformance.check('POST', '/api/auth/cookie/refresh', refreshed);
    assert.equal(refreshed.statusCode, 200);
    const replayed = await postRefresh(ctx.app, refreshToken, await getCsrf(ctx.app, refreshToken));
    conformance.check('POST', '/api/auth/cookie/refresh', replayed);
    assert.equal(replayed.statusCode, 401);
    const other = await newSession(ctx.app, 'owner');
    await call(401, {
      method: 'PUT',
      url: '/api/auth/owner',
      headers: other.auth,
      payload: { old_password: 'wrong-password-entirely-1', new_password: GOOD_PASSWORD },
    });
    await call(204, {
      method: 'DELETE',
      url: '/api/auth/owner/',
      headers: other.auth,
      payload: { password: GOOD_PASSWORD },
    });
    await call(401, { method: 'POST', url: '/api/auth/logout' });
    await call(204, { method: 'POST', url: '/api/auth/logout', headers: auth });

    const statuses = new Set(conformance.seen.map((s) => s.status));
    for (const status of [200, 201, 204, 400, 401, 403, 404, 409, 412, 413, 415])
      assert.ok(statuses.has(status), `no ${status} exercised`);
  });

  test('the conformance check itself rejects wrong bodies, undeclared statuses and content types', async () => {
    const conformance = new Conformance(await openApiDoc(ctx.app));
    const fake = (
      statusCode: number,
      contentType: string,
      body: string,
      headers: Record<string, string> = { 'x-request-id': 'r', etag: '"1"' },
    ) =>
      ({ statusCode, headers: { 'content-type': contentType, ...headers }, body }) as unknown as LightMyRequestResponse;
    const note = {
      id: randomUUID(),
      owner_id: randomUUID(),
      title: 't',
      content: 'c',
      version: 1,
      version_id: randomUUID(),
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      folder_id: null,
      pinned: false,
      archived: false,
      tags: [],
    };
    const json = 'application/json; charset=utf-8';
    conformance.check('GET', `/api/notes/${note.id}`, fake(200, json, JSON.stringify(note)));
    assert.throws(
      () =>
        conformance.check(
          'GET',
          `/api/notes/${note.id}`,
          fake(200, json, JSON.stringify(note), { 'x-request-id': 'r' }),
        ),
      /promises a ETag header/,
    );
    assert.throws(
      () => conformance.check('GET', `/api/notes/${note.id}`, fake(200, json, JSON.stringify({ ...note, version: 0 }))),
      /does not match/,
    );
    assert.throws(
      () =>
        conformance.check(
          'GET',
          `/api/notes/${note.id}`,
          fake(200, json, JSON.stringify({ ...note, created_at: 'yesterday' })),
        ),
      /does not match/,
    );
    assert.throws(() => conformance.check('GET', `/api/notes/${note.id}`, fake(418, json, '{}')), /does not declare/);
    assert.throws(
      () => conformance.check('GET', `/api/notes/${note.id}`, fake(404, json, '{}', { 'x-request-id': 'r' })),
      /declared: application\/problem\+json/,
    );
    // A header that means something to clients, sent where the document does not list it.
    assert.throws(
      () =>
        conformance.check(
          'GET',
          `/api/notes/${note.id}`,
          fake(200, json, JSON.stringify(note), { 'x-request-id': 'r', etag: '"1"', location: '/x' }),
        ),
      /sends Location/,
    );
    assert.throws(
      () =>
        conformance.check(
          'GET',
          `/api/notes/${note.id}`,
          fake(
            429,
            'application/problem+json',
            JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'd' }),
            { 'x-request-id': 'r', 'retry-after': 'soon' },
          ),
        ),
      /header Retry-After/,
    );
    // A $ref into components.schemas is followed: a user without is_admin is refused.
    const user = { id: randomUUID(), username: 'a', created_at: null, updated_at: null };
    const login = { 'x-request-id': 'r', 'set-cookie': 'a=b', 'cache-control': 'no-store' };
    assert.throws(
      () =>
        conformance.check(
          'POST',
          '/api/auth/login',
          fake(200, json, JSON.stringify({ access_token: 'x', user }), login),
        ),
      /is_admin/,
    );
    conformance.check(
      'POST',
      '/api/auth/login',
      fake(200, json, JSON.stringify({ access_token: 'x', user: { ...user, is_admin: false, email: null } }), login),
    );
  });

  test('GET /api/docs serves the documentation page', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/docs' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.body, /<title>Vellum API<\/title>/);
  });
});
