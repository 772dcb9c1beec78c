// The api client (web/src/api/client.ts) against a fake network: typed calls go through the
// session (refresh, bearer token), failures carry the server's problem+json detail, and the view
// cookie decides whether a reload tries to recover the session.
import assert from 'node:assert/strict';
import { after, beforeEach, describe, it } from 'node:test';

const ORIGIN = 'http://app.test';
Object.defineProperty(globalThis, 'location', { value: { origin: ORIGIN, href: `${ORIGIN}/` }, configurable: true });
const cookieJar = { cookie: '' };
Object.defineProperty(globalThis, 'document', { value: cookieJar, configurable: true });

const { api, ApiError, mayHaveSession, raw, session, toApiError, unwrap } = await import('../src/api/client.js');

type Handler = (request: Request) => Response | Promise<Response>;
const realFetch = globalThis.fetch;
let routes: Record<string, Handler> = {};
let calls: string[] = [];
globalThis.fetch = (async (input: Request | string | URL) => {
  const request = input instanceof Request ? input : new Request(input);
  const url = new URL(request.url);
  const key = `${request.method} ${url.pathname}${url.search}`;
  calls.push(
    [key, request.headers.get('authorization'), request.headers.get('content-type')].filter(Boolean).join(' | '),
  );
  const handler = routes[key];
  return handler ? handler(request) : problem(404, 'Not here', 'not_found');
}) as typeof fetch;
after(() => {
  globalThis.fetch = realFetch;
});

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const problem = (status: number, detail: string, code: string) =>
  new Response(JSON.stringify({ type: 'about:blank', title: 'Error', status, detail, code }), {
    status,
    headers: { 'content-type': 'application/problem+json' },
  });

beforeEach(() => {
  routes = {};
  calls = [];
  session.setAccessToken(null);
});

describe('api client', () => {
  it('a typed call without a token in memory recovers it through the refresh cookie first', async (t) => {
    // The view cookie that comes with a refresh cookie says one may exist.
    cookieJar.cookie = `app.expires_at=${Math.floor(Date.now() / 1000) + 3600}`;
    t.after(() => {
      cookieJar.cookie = '';
    });
    routes = {
      'GET /api/auth/cookie/csrf': () => new Response(null, { status: 204, headers: { 'x-csrf-token': 'c1' } }),
      'POST /api/auth/cookie/refresh': () => json({ access_token: 'tok' }),
      'GET /api/auth/me': (r) =>
        r.headers.get('authorization') === 'Bearer tok'
          ? json({ id: 'u1', username: 'ada', is_admin: false, created_at: '2026-01-01T00:00:00.000Z' })
          : problem(401, 'Unauthorized', 'unauthorized'),
    };
    const me = unwrap(await api.GET('/api/auth/me'));
    assert.equal(me.username, 'ada');
    assert.deepEqual(calls, [
      'GET /api/auth/cookie/csrf',
      'POST /api/auth/cookie/refresh',
      'GET /api/auth/me | Bearer tok',
    ]);
  });

  it("a failure becomes an ApiError with the status and the server's detail", async () => {
    session.setAccessToken('tok');
    routes = {
      'GET /api/notes/0b8f7f5e-2a5c-4a55-9d39-6a1d1f4b7a10': () => problem(404, 'Note not found', 'note_not_found'),
    };
    const result = await api.GET('/api/notes/{noteID}', {
      params: { path: { noteID: '0b8f7f5e-2a5c-4a55-9d39-6a1d1f4b7a10' } },
    });
    assert.throws(
      () => unwrap(result),
      (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.status, 404);
        assert.equal(error.message, 'Note not found');
        assert.deepEqual((error.body as { code: string }).code, 'note_not_found');
        return true;
      },
    );
  });

  it('without a detail the message is the status line', () => {
    const error = toApiError(new Response('oops', { status: 502, statusText: 'Bad Gateway' }), 'oops');
    assert.equal(error.message, '502 Bad Gateway');
  });

  it('raw sends the token and the body as it is, with the type the caller gives', async () => {
    session.setAccessToken('tok');
    let received = '';
    routes = {
      'POST /api/import': async (r) => {
        received = await r.text();
        return new Response(null, { status: 204 });
      },
    };
    const response = await raw('/api/import', {
      method: 'POST',
      headers: { 'content-type': 'text/markdown' },
      body: '# Notes',
    });
    assert.equal(response.status, 204);
    assert.equal(received, '# Notes');
    assert.deepEqual(calls, ['POST /api/import | Bearer tok | text/markdown']);
  });

  it('the view cookie says whether a refresh cookie may exist', () => {
    cookieJar.cookie = '';
    assert.equal(mayHaveSession(), false);
    cookieJar.cookie = `theme=dark; app.expires_at=${Math.floor(Date.now() / 1000) + 3600}`;
    assert.equal(mayHaveSession(), true);
    cookieJar.cookie = `app.expires_at=${Math.floor(Date.now() / 1000) - 1}`;
    assert.equal(mayHaveSession(), false);
  });
});
