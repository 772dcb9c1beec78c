import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession, problemOf, type Session } from '../helpers/harness.js';

/**
 * Issue #20: the route schema is the only statement of an input rule, and Ajv's errors are
 * answered in the contract's words. What each rule says is tested with its route (notes, search,
 * export, accounts...); these are the rules every route shares.
 */
forEachDatabase('HTTP: input validated by the route schemas', (ctx) => {
  let s: Session;
  const get = (url: string) => ctx.app.inject({ method: 'GET', url, headers: s.auth });
  const expect400 = async (url: string, detail: string, code = 'invalid_query') => {
    const res = await get(url);
    assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
    assert.deepEqual(problemOf(res), { type: 'about:blank', title: 'Bad Request', status: 400, detail, code }, url);
  };

  test('an integer in a query is written as JSON writes one: no exponent, spaces, hex, plus, fraction or leading zero', async () => {
    s = await newSession(ctx.app, 'strict');
    for (const value of ['1e1', '%205', '5%20', '0x10', '%2B5', '5.0', '5.', '', '1_0', '٣', '007', '00']) {
      await expect400(`/api/notes?limit=${value}`, 'Query parameter "limit" must be an integer from 1 to 100');
      await expect400(`/api/trash?offset=${value}`, 'Query parameter "offset" must be an integer 0 or more');
    }
    for (const value of ['7', '10', '100'])
      assert.equal((await get(`/api/notes?limit=${value}`)).statusCode, 200, value);
    assert.equal((await get('/api/trash?offset=0')).statusCode, 200);
    await expect400('/api/notes?limit=-0', 'Query parameter "limit" must be an integer from 1 to 100');
  });

  test('a query parameter the route does not have is 400 naming it, on routes with and without parameters', async () => {
    s = await newSession(ctx.app, 'unknown');
    await expect400('/api/notes?limit=5&page=2', 'Unknown query parameter "page"');
    await expect400('/api/notes/search?q=x&sort=date', 'Unknown query parameter "sort"');
    await expect400('/api/auth/me?verbose=1', 'Unknown query parameter "verbose"');
    await expect400('/api/notes/00000000-0000-4000-8000-000000000000?x', 'Unknown query parameter "x"');
  });

  test('bodies are never coerced: a number sent as a string stays a 400', async () => {
    s = await newSession(ctx.app, 'coerce');
    const note = (
      await ctx.app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: s.auth,
        payload: { title: 't', content: 'c' },
      })
    ).json();
    const restore = (payload: unknown) =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${note.id}/restore`,
        headers: s.auth,
        payload: payload as string,
      });
    const refused = await restore({ version: '1' });
    assert.equal(refused.statusCode, 400);
    assert.equal(
      problemOf(refused).detail,
      'Invalid request body: version must be a version number (an integer 1 or more)',
    );
    for (const payload of [{}, { version: 1, version_id: note.version_id }, { version: 1, extra: true }]) {
      assert.equal(
        problemOf(await restore(payload)).detail,
        'Invalid request body: give exactly one of "version" and "version_id"',
      );
    }
    assert.equal((await restore({ version: 1 })).statusCode, 201);
    const created = await ctx.app.inject({ method: 'POST', url: '/api/notes', headers: s.auth, payload: { title: 7 } });
    assert.equal(problemOf(created).detail, 'Invalid request body: title must be a string of at most 200 characters');
  });

  test('If-Match: any list of entity tags is well-formed (a comma inside a tag too); only versions match', async () => {
    s = await newSession(ctx.app, 'ifmatch');
    const note = (
      await ctx.app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: s.auth,
        payload: { title: 't', content: 'c' },
      })
    ).json();
    const save = (ifMatch: string) =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${note.id}/versions`,
        headers: { ...s.auth, 'if-match': ifMatch },
        payload: { title: 't', content: 'c' },
      });
    for (const stale of ['"1,2"', 'W/"1"', '"x", W/"1"', '"01"'])
      assert.equal((await save(stale)).statusCode, 412, stale);
    assert.equal((await save('"7", "1"')).statusCode, 204);
    const malformed = await save('1');
    assert.equal(malformed.statusCode, 400);
    assert.deepEqual(problemOf(malformed).detail, 'If-Match must be an entity tag from GET /api/notes/{id}, like "3"');
  });
});
