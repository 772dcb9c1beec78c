import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createBreachChecker } from '../../src/passwords/breach-check.js';
import { assertProblem } from '../helpers/auth.js';
import { forEachDatabase, uniqueName } from '../helpers/harness.js';

const BREACHED = 'This password appears in known data breaches; choose a different one';
const sha1 = (password: string) => createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();

/** Strong passwords (length and entropy pass) that the fake range API treats in different ways. */
const LISTED = 'Stolen-lantern-Harbor-77-quietly';
const LISTED_NO_COUNT = 'Countless-violet-Otter-55-slowly';
const PADDING_ONLY = 'Padded-meadow-Falcon-19-softly';
const STRONG = 'Unlisted-cobalt-Heron-31-gently';
/** In the bundled offline list, and strong enough otherwise (75 bits). */
const OFFLINE_LISTED = 'passwordpassword';

interface FakeRangeApi {
  url: string;
  requests: Array<{ method: string; url: string; addPadding: string | undefined }>;
  close(): Promise<void>;
}

/** Answers like api.pwnedpasswords.com with Add-Padding: CRLF lines of SUFFIX:COUNT, padding at count 0. */
async function fakeRangeApi(
  answer: (prefix: string) => { status: number; lines: string[] } | 'hang',
): Promise<FakeRangeApi> {
  const requests: FakeRangeApi['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url!, addPadding: req.headers['add-padding'] as string | undefined });
    const match = /^\/range\/([0-9A-F]{5})$/.exec(req.url ?? '');
    const reply = match ? answer(match[1]!) : { status: 404, lines: [] };
    if (reply === 'hang') return;
    res.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Random padding lines, as the real API adds them. */
const padding = (n: number) =>
  Array.from({ length: n }, () => `${randomBytes(18).toString('hex').toUpperCase().slice(0, 35)}:0`);

/** The answer for a prefix: padding, plus the listed passwords that share it. */
function hibp(prefix: string): { status: number; lines: string[] } {
  const lines = padding(20);
  for (const [password, count] of [
    [LISTED, ':42'],
    [LISTED_NO_COUNT, ''],
    [PADDING_ONLY, ':0'],
  ] as const) {
    const hash = sha1(password);
    if (hash.startsWith(prefix)) lines.splice(7, 0, `${hash.slice(5)}${count}`);
  }
  return { status: 200, lines };
}

/** A port that was just free and now has nobody listening. */
async function closedPortUrl(): Promise<string> {
  const api = await fakeRangeApi(hibp);
  await api.close();
  return api.url;
}

forEachDatabase('breached-password check through signup', (ctx) => {
  const signup = (password: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/auth/signup', payload: { username: uniqueName(), password } });

  test('the range API is asked for the SHA-1 prefix with Add-Padding; listed passwords are refused', async () => {
    const api = await fakeRangeApi(hibp);
    try {
      await ctx.rebuild({ PWNED_PASSWORDS_URL: api.url });
      assertProblem(await signup(LISTED), 400, BREACHED);
      assert.deepEqual(api.requests, [
        { method: 'GET', url: `/range/${sha1(LISTED).slice(0, 5)}`, addPadding: 'true' },
      ]);
      assertProblem(await signup(LISTED_NO_COUNT), 400, BREACHED);
      assert.equal((await signup(PADDING_ONLY)).statusCode, 201, 'a count-0 padding line is not a breach');
      assert.equal((await signup(STRONG)).statusCode, 201);
      assert.equal(api.requests.length, 4);
    } finally {
      await api.close();
    }
  });

  test('POST /password-rules/check says what signup would: the range API, or the bundled list when it is off', async () => {
    const check = (password: unknown) =>
      ctx.app.inject({ method: 'POST', url: '/api/auth/password-rules/check', payload: { password } });
    const api = await fakeRangeApi(hibp);
    try {
      await ctx.rebuild({ PWNED_PASSWORDS_URL: api.url });
      const listed = await check(LISTED);
      assert.equal(listed.statusCode, 200);
      assert.equal(listed.headers['cache-control'], 'no-store');
      assert.deepEqual(listed.json(), { breached: true });
      assert.deepEqual((await check(PADDING_ONLY)).json(), { breached: false });
      assert.deepEqual((await check(STRONG)).json(), { breached: false });
      assert.deepEqual(
        api.requests.map((r) => r.url),
        [LISTED, PADDING_ONLY, STRONG].map((p) => `/range/${sha1(p).slice(0, 5)}`),
      );
    } finally {
      await api.close();
    }
    await ctx.rebuild({ PWNED_PASSWORDS_URL: 'off' });
    assert.deepEqual((await check(OFFLINE_LISTED)).json(), { breached: true });
    assert.deepEqual((await check(STRONG)).json(), { breached: false });
    for (const bad of ['', 'x'.repeat(1025), 42, null]) assert.equal((await check(bad)).statusCode, 400, String(bad));
    await ctx.rebuild();
  });

  test('no password leaves the process: only 5 hex digits of its hash', async () => {
    const api = await fakeRangeApi(hibp);
    try {
      await ctx.rebuild({ PWNED_PASSWORDS_URL: `${api.url}/` });
      assert.equal((await signup(STRONG)).statusCode, 201);
      assert.equal(api.requests.length, 1);
      assert.match(api.requests[0]!.url, /^\/range\/[0-9A-F]{5}$/);
    } finally {
      await api.close();
    }
  });

  test('range API unreachable (closed port): falls back to the offline list', async () => {
    await ctx.rebuild({ PWNED_PASSWORDS_URL: await closedPortUrl() });
    assertProblem(await signup(OFFLINE_LISTED), 400, BREACHED);
    assertProblem(await signup('qazwsxedcrfvtgb'), 400, BREACHED);
    assert.equal((await signup(STRONG)).statusCode, 201);
    // Only the offline list: a password the range API would list passes.
    assert.equal((await signup(LISTED)).statusCode, 201);
  });

  test('range API failing (HTTP 500): falls back to the offline list', async () => {
    const api = await fakeRangeApi(() => ({ status: 500, lines: ['oops'] }));
    try {
      await ctx.rebuild({ PWNED_PASSWORDS_URL: api.url });
      assertProblem(await signup(OFFLINE_LISTED), 400, BREACHED);
      assert.equal((await signup(STRONG)).statusCode, 201);
      assert.equal(api.requests.length, 2);
    } finally {
      await api.close();
    }
  });

  test('PWNED_PASSWORDS_URL=off: the offline list alone', async () => {
    await ctx.rebuild({ PWNED_PASSWORDS_URL: 'off' });
    assertProblem(await signup(OFFLINE_LISTED), 400, BREACHED);
    assert.equal((await signup(STRONG)).statusCode, 201);
  });
});

describe('breached-password check: time-out', () => {
  let api: FakeRangeApi;
  before(async () => {
    api = await fakeRangeApi(() => 'hang');
  });
  after(async () => {
    await api.close();
  });

  test('a range API that never answers is given up after the 2 s time-out, then the offline list decides', {
    timeout: 15_000,
  }, async () => {
    const warnings: unknown[] = [];
    const checker = createBreachChecker({
      baseUrl: api.url,
      log: { warn: (...args: unknown[]) => warnings.push(args) } as never,
    });
    const [listed, strong] = await Promise.all([checker.check(OFFLINE_LISTED), checker.check(STRONG)]);
    assert.equal(listed, 'breached');
    assert.equal(strong, 'clean');
    assert.equal(api.requests.length, 2);
    assert.equal(warnings.length, 2, 'each fallback is logged');
  });
});
