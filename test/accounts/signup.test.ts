import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, bearer } from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, login, uniqueName } from '../helpers/harness.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const USERNAME_RULE =
  'Username must be 3 to 32 characters of a-z, 0-9, "_", "." or "-", and start and end with a letter or digit';
const TOO_SHORT = 'Password must be at least 15 characters long; a few unrelated words make a strong one';
const TOO_LONG = 'Password must be at most 256 characters long';
const BREACHED = 'This password appears in known data breaches; choose a different one';
const TOO_GUESSABLE =
  'Password is too easy to guess: make it longer, avoid repeats and sequences like "1234" or "qwerty", or mix in other kinds of characters';

forEachDatabase('POST /auth/signup', (ctx) => {
  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  test('201 with exactly {id, username}; the username is stored lower-cased', async () => {
    const name = uniqueName('Mixed');
    const res = await post({ username: name, password: GOOD_PASSWORD });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['id', 'username']);
    assert.match(body.id, UUID_V4);
    assert.equal(body.username, name.toLowerCase());
    const session = await login(ctx.app, name.toUpperCase());
    const me = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: session.auth });
    assert.equal(me.json().id, body.id);
    assert.equal(me.json().username, name.toLowerCase());
  });

  test('409 for a taken username, also in another case', async () => {
    const name = uniqueName('dup');
    assert.equal((await post({ username: name, password: GOOD_PASSWORD })).statusCode, 201);
    assertProblem(await post({ username: name, password: GOOD_PASSWORD }), 409, 'Username is already in use');
    assertProblem(
      await post({ username: name.toUpperCase(), password: GOOD_PASSWORD }),
      409,
      'Username is already in use',
    );
  });

  test('a body cannot make an administrator', async () => {
    const name = uniqueName('sneaky');
    assert.equal(
      (await post({ username: name, password: GOOD_PASSWORD, is_admin: true, admin: true })).statusCode,
      201,
    );
    const session = await login(ctx.app, name);
    const me = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: session.auth });
    assert.equal(me.json().is_admin, false);
    const all = await ctx.app.inject({
      method: 'GET',
      url: '/api/auth/admin/all',
      headers: bearer(session.accessToken),
    });
    assertProblem(all, 403, 'Forbidden');
  });

  test('the username rule: 400 with the rule as message', async () => {
    const bad = [
      '',
      'ab',
      'a'.repeat(33),
      '-abc',
      'abc-',
      '.abc',
      'abc_',
      'ab c',
      'ab@c',
      'üser',
      'user\n',
      'a/b',
      'İstanbul',
      // Never as far as the database (PostgreSQL refuses U+0000 in text): 400, not 500.
      'abc\u0000',
      '\u0000abc',
      'a\u0000c',
      'x'.repeat(1000),
      '\u{1F600}\u{1F4DD}\u{1F600}',
    ];
    for (const username of bad) {
      assertProblem(await post({ username, password: GOOD_PASSWORD }), 400, USERNAME_RULE);
    }
  });

  test('the username is lower-cased first, then checked: the Kelvin sign (U+212A) lower-cases to "k" and passes', async () => {
    const name = uniqueName('elvin');
    const res = await post({ username: `\u212A${name}`, password: GOOD_PASSWORD });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().username, `k${name}`);
    assertProblem(
      await post({ username: `\u212A${name}`, password: GOOD_PASSWORD }),
      409,
      'Username is already in use',
    );
  });

  test('usernames at the edges of the rule pass it (then fail on the password, which comes second)', async () => {
    const edge = ['abc', 'a'.repeat(32), 'a.b', 'a_b', 'a-b', '0x0', 'A.B-C_D'];
    for (const username of edge) assertProblem(await post({ username, password: 'short' }), 400, TOO_SHORT);
  });

  test('password length is counted in code points: 14 is too short, 256 the most, never trimmed', async () => {
    const username = uniqueName();
    assertProblem(await post({ username, password: 'Xq7#mZ2!vL9@pR' }), 400, TOO_SHORT);
    assertProblem(await post({ username, password: '🦊🌲🎻🧭🪁🐙🍋🚲🧩🎈🪐🦉🌵🥁' }), 400, TOO_SHORT);
    assertProblem(
      await post({ username, password: `${GOOD_PASSWORD} ${'x'.repeat(256)}`.slice(0, 257) }),
      400,
      TOO_LONG,
    );
    assertProblem(await post({ username, password: '               ' }), 400, TOO_GUESSABLE);
    // Spaces around a password are part of it.
    assert.equal((await post({ username, password: `  ${GOOD_PASSWORD}  ` })).statusCode, 201);
    const wrong = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: GOOD_PASSWORD },
    });
    assertProblem(wrong, 401, 'Invalid credentials');
    assert.equal((await login(ctx.app, username, `  ${GOOD_PASSWORD}  `)).username, username);
  });

  test('15 code points of emoji and a 256-character password are long enough', async () => {
    const emoji = '🦊🌲🎻🧭🪁🐙🍋🚲🧩🎈🪐🦉🌵🥁🦆';
    assert.equal((await post({ username: uniqueName(), password: emoji })).statusCode, 201);
    const long = `${GOOD_PASSWORD}-${'x'.repeat(256)}`.slice(0, 256);
    assert.equal((await post({ username: uniqueName(), password: long })).statusCode, 201);
  });

  test('a breached password (offline list, the range API being off here) is refused with its own message', async () => {
    assertProblem(await post({ username: uniqueName(), password: 'passwordpassword' }), 400, BREACHED);
    assertProblem(await post({ username: uniqueName(), password: 'qazwsxedcrfvtgb' }), 400, BREACHED);
  });

  test('a password with too little entropy is refused with its own message', async () => {
    assertProblem(await post({ username: uniqueName(), password: 'zzzzzzzzzzzzzzzzzzzz1' }), 400, TOO_GUESSABLE);
    assertProblem(await post({ username: uniqueName(), password: 'abcdefghijklmnopqrstuvwxyz' }), 400, TOO_GUESSABLE);
  });

  test('missing fields, wrong types and broken JSON: 400 Invalid request body', async () => {
    const bodies: unknown[] = [
      {},
      { username: uniqueName() },
      { password: GOOD_PASSWORD },
      { username: 42, password: GOOD_PASSWORD },
      { username: uniqueName(), password: null },
      { username: [uniqueName()], password: GOOD_PASSWORD },
      [],
      'null',
      '"text"',
      '{"username":',
      '{username: "a"}',
      '',
      '   ',
      // Prototype poisoning is refused outright.
      `{"username":"${uniqueName()}","password":"${GOOD_PASSWORD}","__proto__":{"is_admin":true}}`,
      `{"username":"${uniqueName()}","password":"${GOOD_PASSWORD}","constructor":{"prototype":{"is_admin":true}}}`,
    ];
    for (const body of bodies) assertProblem(await post(body), 400, 'Invalid request body');
  });

  test('a body that is not JSON: 415', async () => {
    const text = `{"username":"${uniqueName()}","password":"${GOOD_PASSWORD}"}`;
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      const res = await post(text, { 'content-type': type });
      assertProblem(res, 415, 'Unsupported content type: send application/json');
    }
  });

  test('a body over 16 KiB: 413', async () => {
    const payload = JSON.stringify({ username: uniqueName(), password: GOOD_PASSWORD, pad: 'x'.repeat(16 * 1024) });
    assertProblem(await post(payload), 413, 'Request body is too large');
  });
});
