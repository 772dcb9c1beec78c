// The browser session (web/src/api/session.ts) against a fake server: refresh on 401, retry once,
// CSRF before refresh, one refresh at a time, and sign-out when the refresh cookie is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Session, type LockManagerLike } from '../src/api/session.js';

type Handler = (request: Request) => Response | Promise<Response>;

function fakeServer(routes: Record<string, Handler>) {
  const calls: string[] = [];
  const fetch = async (request: Request) => {
    const key = `${request.method} ${new URL(request.url).pathname}`;
    calls.push(
      [key, request.headers.get('authorization'), request.headers.get('x-csrf-token')].filter(Boolean).join(' '),
    );
    const handler = routes[key];
    return handler ? handler(request) : new Response(null, { status: 404 });
  };
  return { calls, fetch };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const csrfOk = () => new Response(null, { status: 204, headers: { 'x-csrf-token': 'csrf-1' } });

/** A note route that accepts only the given access token. */
const noteFor =
  (token: string): Handler =>
  (request) =>
    request.headers.get('authorization') === `Bearer ${token}`
      ? json({ id: 'n1' })
      : json({ detail: 'Unauthorized' }, 401);

describe('Session', () => {
  it('sends the access token, and on 401 refreshes (CSRF first) and retries once with the body intact', async () => {
    const bodies: string[] = [];
    const server = fakeServer({
      'GET /api/auth/cookie/csrf': csrfOk,
      'POST /api/auth/cookie/refresh': (r) =>
        r.headers.get('x-csrf-token') === 'csrf-1' ? json({ access_token: 'fresh' }) : json({}, 403),
      'POST /api/notes/n1/versions': async (r) => {
        bodies.push(await r.text());
        return r.headers.get('authorization') === 'Bearer fresh'
          ? new Response(null, { status: 204 })
          : json({ detail: 'Unauthorized' }, 401);
      },
    });
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app' });
    session.setAccessToken('expired');
    const response = await session.fetch(
      new Request('http://app/api/notes/n1/versions', { method: 'POST', body: '{"title":"t","content":"c"}' }),
    );
    assert.equal(response.status, 204);
    assert.deepEqual(server.calls, [
      'POST /api/notes/n1/versions Bearer expired',
      'GET /api/auth/cookie/csrf',
      'POST /api/auth/cookie/refresh csrf-1',
      'POST /api/notes/n1/versions Bearer fresh',
    ]);
    assert.deepEqual(bodies, ['{"title":"t","content":"c"}', '{"title":"t","content":"c"}']);
  });

  it('without a token in memory (a reload) refreshes before the first call', async () => {
    const server = fakeServer({
      'GET /api/auth/cookie/csrf': csrfOk,
      'POST /api/auth/cookie/refresh': () => json({ access_token: 'a2' }),
      'GET /api/auth/me': noteFor('a2'),
    });
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app' });
    assert.equal((await session.fetch(new Request('http://app/api/auth/me'))).status, 200);
    assert.equal(server.calls.length, 3);
    assert.equal(session.signedIn, true);
  });

  it('a refresh answered 401 is retried once (another tab rotated the cookie), then succeeds', async () => {
    let refreshes = 0;
    const server = fakeServer({
      'GET /api/auth/cookie/csrf': csrfOk,
      'POST /api/auth/cookie/refresh': () =>
        ++refreshes === 1 ? json({ detail: 'Invalid refresh token' }, 401) : json({ access_token: 'a3' }),
      'GET /api/notes/n1': noteFor('a3'),
    });
    let signedOut = 0;
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', onSignedOut: () => signedOut++ });
    session.setAccessToken('old');
    assert.equal((await session.fetch(new Request('http://app/api/notes/n1'))).status, 200);
    assert.equal(refreshes, 2);
    assert.equal(signedOut, 0);
  });

  it('when refresh is refused twice the user is signed out and the 401 is returned', async () => {
    let refreshes = 0;
    const server = fakeServer({
      'GET /api/auth/cookie/csrf': csrfOk,
      'POST /api/auth/cookie/refresh': () => {
        refreshes += 1;
        return json({ detail: 'Invalid refresh token' }, 401);
      },
      'GET /api/notes/n1': noteFor('never'),
    });
    let signedOut = 0;
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', onSignedOut: () => signedOut++ });
    session.setAccessToken('old');
    assert.equal((await session.fetch(new Request('http://app/api/notes/n1'))).status, 401);
    assert.equal(refreshes, 2);
    assert.equal(signedOut, 1);
    assert.equal(session.signedIn, false);
  });

  it('a refresh the server cannot answer now (503, 429) fails like the network: no sign-out, the token kept, the next refresh works', async () => {
    for (const status of [503, 502, 429]) {
      let refreshes = 0;
      const server = fakeServer({
        'GET /api/auth/cookie/csrf': csrfOk,
        'POST /api/auth/cookie/refresh': () => (++refreshes === 1 ? json({}, status) : json({ access_token: 'a4' })),
        'GET /api/notes/n1': noteFor('a4'),
      });
      let signedOut = 0;
      const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', onSignedOut: () => signedOut++ });
      session.setAccessToken('old');
      await assert.rejects(
        session.fetch(new Request('http://app/api/notes/n1')),
        (error: unknown) => error instanceof TypeError && /^Failed to fetch/.test(error.message),
        String(status),
      );
      assert.equal(signedOut, 0, String(status));
      assert.equal(session.signedIn, true, String(status));
      assert.equal((await session.fetch(new Request('http://app/api/notes/n1'))).status, 200, String(status));
    }
  });

  it('the CSRF call answered 503 is the same: nothing is decided about the session', async () => {
    const server = fakeServer({ 'GET /api/auth/cookie/csrf': () => json({}, 503) });
    let signedOut = 0;
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', onSignedOut: () => signedOut++ });
    session.setAccessToken('old');
    await assert.rejects(session.token(true), TypeError);
    assert.equal(signedOut, 0);
    assert.equal(session.signedIn, true);
  });

  it('a refresh that fails after a login set a token keeps that token', async () => {
    let answerCsrf: (response: Response) => void = () => {};
    const server = fakeServer({
      // No refresh cookie yet: the CSRF call is refused, the second time only after the login.
      'GET /api/auth/cookie/csrf': () => new Promise<Response>((resolve) => (answerCsrf = resolve)),
      'GET /api/notes/n1': noteFor('from-login'),
    });
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app' });
    const refreshing = session.refresh();
    answerCsrf(json({}, 401));
    await new Promise((resolve) => setTimeout(resolve, 0));
    session.setAccessToken('from-login');
    answerCsrf(json({}, 401));
    assert.equal(await refreshing, true);
    assert.equal(session.signedIn, true);
    const response = await session.fetch(new Request('http://app/api/notes/n1'));
    assert.equal(response.status, 200);
    assert.deepEqual(server.calls.slice(-1), ['GET /api/notes/n1 Bearer from-login']);
  });

  it('without a token and without a refresh cookie, a call goes as it is, not after a doomed refresh', async () => {
    const server = fakeServer({ 'GET /api/auth/config': () => json({ signup: true }) });
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', mayHaveSession: () => false });
    const response = await session.fetch(new Request('http://app/api/auth/config'));
    assert.equal(response.status, 200);
    assert.deepEqual(server.calls, ['GET /api/auth/config']);
  });

  it('concurrent 401s share one refresh, taken under the cross-tab lock', async () => {
    let refreshes = 0;
    const lockNames: string[] = [];
    const locks: LockManagerLike = {
      request: async (name, callback) => {
        lockNames.push(name);
        return callback();
      },
    };
    const server = fakeServer({
      'GET /api/auth/cookie/csrf': csrfOk,
      'POST /api/auth/cookie/refresh': async () => {
        refreshes += 1;
        await new Promise((r) => setImmediate(r));
        return json({ access_token: 'shared' });
      },
      'GET /api/notes/n1': noteFor('shared'),
    });
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', locks });
    session.setAccessToken('old');
    const answers = await Promise.all([1, 2, 3].map(() => session.fetch(new Request('http://app/api/notes/n1'))));
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 200],
    );
    assert.equal(refreshes, 1);
    assert.deepEqual(lockNames, ['vellum-refresh']);
  });

  it('a 401 from login is the answer (wrong password), not a reason to refresh', async () => {
    const server = fakeServer({ 'POST /api/auth/login': () => json({ detail: 'Invalid credentials' }, 401) });
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app' });
    const response = await session.fetch(new Request('http://app/api/auth/login', { method: 'POST', body: '{}' }));
    assert.equal(response.status, 401);
    assert.deepEqual(server.calls, ['POST /api/auth/login']);
  });

  it('a 401 "Invalid credentials" from a password check is the answer: no refresh, still signed in', async () => {
    const server = fakeServer({
      'DELETE /api/auth/owner': () =>
        json({ status: 401, detail: 'Invalid credentials', code: 'invalid_credentials' }, 401),
    });
    let signedOut = 0;
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', onSignedOut: () => signedOut++ });
    session.setAccessToken('valid');
    const response = await session.fetch(
      new Request('http://app/api/auth/owner', { method: 'DELETE', body: '{"password":"typo"}' }),
    );
    assert.equal(response.status, 401);
    assert.deepEqual(await response.json(), {
      status: 401,
      detail: 'Invalid credentials',
      code: 'invalid_credentials',
    });
    assert.deepEqual(server.calls, ['DELETE /api/auth/owner Bearer valid']);
    assert.equal(signedOut, 0);
    assert.equal(session.signedIn, true);
  });

  it('a 401 "reauthentication_required" (the password asked again, missing or wrong) is the answer too', async () => {
    const problem = {
      status: 401,
      detail: 'Confirm it is you: this needs your password again',
      code: 'reauthentication_required',
    };
    const server = fakeServer({ 'POST /api/auth/sessions/end-others': () => json(problem, 401) });
    let signedOut = 0;
    const session = new Session({ fetch: server.fetch, baseUrl: 'http://app', onSignedOut: () => signedOut++ });
    session.setAccessToken('valid');
    const response = await session.fetch(
      new Request('http://app/api/auth/sessions/end-others', { method: 'POST', body: '{"password":"typo"}' }),
    );
    assert.equal(response.status, 401);
    assert.deepEqual(await response.json(), problem);
    assert.deepEqual(server.calls, ['POST /api/auth/sessions/end-others Bearer valid']);
    assert.equal(signedOut, 0);
    assert.equal(session.signedIn, true);
  });
});
