import { expect, GOOD_PASSWORD, test, uniqueName } from './fixtures';

// The service's own pages let scripts connect to their own origin only (CSP); a page elsewhere
// would not have that policy. (A page Playwright makes up instead would not count as loopback,
// and Chromium refuses it any request to 127.0.0.1 before CORS is even asked.)
test.use({ bypassCSP: true });

/**
 * A page on another allowed origin (CORS_ORIGINS: the same server as http://localhost) calls the
 * API on http://127.0.0.1 the way a separately hosted client would: every request with a JSON body
 * or a token is preflighted, PATCH included.
 */
test('a client on an allowed origin labels a version with PATCH', async ({ page, service }) => {
  await page.goto(`${service.crossOrigin}/`);
  const outcome = await page.evaluate(
    async ({ api, username, password }) => {
      const json = (method: string, path: string, body?: unknown, token?: string) =>
        fetch(`${api}${path}`, {
          method,
          headers: {
            'content-type': 'application/json',
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      await json('POST', '/api/auth/signup', { username, password });
      const { access_token: token } = await (await json('POST', '/api/auth/login', { username, password })).json();
      const note = await (await json('POST', '/api/notes', { title: 't', content: 'c' }, token)).json();
      const patched = await json('PATCH', `/api/notes/${note.id}/${note.version_id}`, { label: 'from afar' }, token);
      return { status: patched.status, label: (await patched.json()).label };
    },
    { api: service.origin, username: uniqueName('cors'), password: GOOD_PASSWORD },
  );
  expect(outcome).toEqual({ status: 200, label: 'from afar' });
});
