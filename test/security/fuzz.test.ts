import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTokenService } from '../../src/sessions/tokens.js';
import {
  forEachDatabase,
  GOOD_PASSWORD,
  JWT_SECRET,
  newSession,
  signup,
  uniqueName,
  type Session,
} from '../helpers/harness.js';
import { THROTTLE_ON } from './support.js';

/**
 * Random and hostile requests against every route the OpenAPI document lists, plus unknown ones.
 * Whatever arrives: never a 5xx, every error is problem+json with the security headers, and a
 * control user the fuzzer never authenticates as keeps its note and its login. Runs with
 * throttling on (limits out of reach) so that its hooks see the same traffic. FUZZ_RUNS and
 * FUZZ_SEED reproduce a failure (fast-check prints both).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const ALLOWED_ORIGIN = 'https://notes.example.com';

const jwt = createTokenService(JWT_SECRET);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** encodeURIComponent, except that a lone surrogate becomes the bytes a sloppy client would send. */
const encode = (value: string) => {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
};

// Large values are built once: the fuzzer picks them, it does not have to grow them.
const BIG = {
  deepArray: '['.repeat(50_000) + ']'.repeat(50_000),
  deepObject: '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000),
  deepProto: '{"__proto__":'.repeat(5_000) + '{}' + '}'.repeat(5_000),
  content: JSON.stringify({ title: 't', content: 'x'.repeat(1024 * 1024 + 1) }),
  escaped: JSON.stringify({ title: 't', content: '\u0000'.repeat(600_000) }),
  overLimit: JSON.stringify({ title: 't', content: 'y'.repeat(8 * 1024 * 1024) }),
  longString: 'z'.repeat(20_000),
};

/** Bodies that have broken JSON stacks elsewhere: prototype keys, odd encodings, sheer size and depth. */
const HOSTILE_BODIES: Array<string | Buffer> = [
  '{"__proto__":{"admin":true,"polluted":1},"username":"a","password":"b"}',
  '{"constructor":{"prototype":{"polluted":1}},"title":"t","content":"c"}',
  '{"title":"t","content":"c","__proto__":null}',
  '{"a":1,}',
  'NaN',
  '\ufeff{}',
  '{"title":"\\ud800","content":"\\u0000"}',
  '{"title":"t","content":"c","title":{"x":1}}',
  '{"username":"a","password":"b","username":["x"]}',
  ...Object.values(BIG),
  Buffer.from([0xff, 0xfe, 0xfd]),
  // "\xc0\xaf": an overlong "/"; "\xed\xa0\x80": a UTF-8-encoded lone surrogate.
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]),
  Buffer.from('{"title":"\xed\xa0\x80","content":"x","old_password":"\xed\xa0\x80","password":"\xff"}', 'latin1'),
];

interface World {
  fuzzer: Session;
  paths: Array<{ method: string; path: string }>;
  ids: string[];
}

function requests(world: World): fc.Arbitrary<InjectOptions & { method: string }> {
  const { fuzzer } = world;
  const text = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\ud800',
      'null',
      '-1',
      '1e309',
      '0x10',
      '../../etc/passwd',
      "' OR 1=1 --",
      BIG.longString,
    ),
  );
  const id = fc.oneof(
    fc.constantFrom(...world.ids),
    fc.uuid().map((u) => u.toUpperCase()),
    fc.constantFrom(
      '%',
      '%zz',
      '%00',
      '%E0%A4%A',
      '..',
      '%2e%2e',
      '',
      'x'.repeat(5000),
      '00000000-0000-0000-0000-000000000000',
    ),
    text.map(encode),
  );
  const known = fc.tuple(fc.constantFrom(...world.paths), id, id).map(([route, a, b]) => {
    let n = 0;
    return { method: route.method, path: route.path.replace(/\{[^}]+\}/g, () => (n++ === 0 ? a : b)) };
  });
  const unknown = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE', 'SEARCH'),
    path: fc.oneof(
      fc.webPath(),
      fc.constantFrom('/api', '/api/', '/api/notes//versions', '/API/NOTES', '/api/auth/../notes', '//api/notes'),
    ),
  });
  const route = fc.oneof({ arbitrary: known, weight: 4 }, { arbitrary: unknown, weight: 1 });
  const otherMethod = fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'), {
    freq: 4,
  });

  const query = fc.oneof(
    fc.constant(''),
    fc.webQueryParameters().map((q) => `?${q}`),
    fc
      .tuple(fc.constantFrom('limit', 'offset', 'includeUser', '__proto__[admin]', 'constructor', 'limit[]'), text)
      .map(([k, v]) => `?${k}=${encode(v)}`),
    fc.constantFrom(
      '?limit=1&limit=2',
      '?offset=-1',
      '?limit=99999999999999999999',
      '?includeUser=true&includeUser=1',
      '?%',
    ),
  );

  const tokens = fc.constantFrom(
    fuzzer.accessToken,
    jwt.sign('access', { userId: fuzzer.userId, admin: true }).token,
    jwt.sign('refresh', { userId: fuzzer.userId, admin: false }).token,
    jwt.sign('access', { userId: 'not-a-uuid', admin: false }).token,
    jwt.sign('access', { userId: randomUUID(), admin: true }).token,
    `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: fuzzer.userId, type: 'access', admin: true })}.`,
    `${fuzzer.accessToken.slice(0, -3)}abc`,
  );
  /** Mostly well-formed, so that requests get past the first check and reach deeper code. */
  const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: bad, weight: 1 });
  const authorization = fc.oneof(
    { arbitrary: fc.constant(`Bearer ${fuzzer.accessToken}`), weight: 6 },
    tokens.map((t) => `Bearer ${t}`),
    tokens.map((t) => `bEaReR \t ${t}`),
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Bearer a b',
      'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
      'bearer\u0000x',
      `Bearer ${BIG.longString}`,
    ),
    text,
  );
  const headers = fc.record(
    {
      authorization,
      'content-type': mostly(
        fc.constant('application/json'),
        fc.oneof(
          fc.constantFrom(
            'application/json',
            'application/json; charset=utf-8',
            'application/json; charset=latin1',
            'APPLICATION/JSON',
            'application/json;;;',
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/problem+json',
            'application/json\u0000',
            '',
          ),
          text,
        ),
      ),
      'if-match': fc.oneof(
        fc.constantFrom('*', '"1"', 'W/"1"', '"1", W/"2"', '"99999999999"', '"-1"', '""', ','),
        text,
      ),
      origin: fc.oneof(
        fc.constantFrom(ALLOWED_ORIGIN, 'null', 'https://evil.example', `${ALLOWED_ORIGIN}.evil.example`),
        text,
      ),
      'x-forwarded-for': fc.oneof(
        fc.ipV4(),
        fc.ipV6(),
        fc.constantFrom(',,,', 'unknown', '1.2.3.4, ::1', '::ffff:1.2.3.4'),
        text,
      ),
      'x-csrf-token': text,
      cookie: fc.oneof(
        fc.constant(`app.refresh_token=${fuzzer.refreshToken}`),
        fc.constantFrom('app.refresh_token=', 'app.refresh_token=%', '_csrf=s%3Ajunk.sig; app.refresh_token=x', '=;=;'),
        text,
      ),
      'x-request-id': text,
      'access-control-request-method': fc.constantFrom('POST', 'DELETE', 'BREW'),
    },
    { requiredKeys: ['authorization', 'content-type'] },
  );

  const json = (value: fc.Arbitrary<unknown>) => value.map((v) => JSON.stringify(v));
  const credentials = fc.record({
    username: fc.oneof(text, fc.constant(fuzzer.username)),
    // Rarely the real password: with it DELETE /owner ends the fuzzer's account for the rest of the run.
    password: fc.oneof({ arbitrary: text, weight: 9 }, { arbitrary: fc.constant(GOOD_PASSWORD), weight: 1 }),
  });
  const noteText = fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), text);
  const payload = fc.oneof(
    fc.constant(undefined),
    json(credentials),
    json(fc.record({ title: mostly(noteText, fc.anything()), content: mostly(noteText, fc.anything()) })),
    json(
      fc.record(
        { title: mostly(noteText, fc.anything()), content: mostly(noteText, fc.anything()) },
        { requiredKeys: [] },
      ),
    ),
    json(fc.record({ old_password: text, new_password: text, password: text }, { requiredKeys: [] })),
    json(fc.jsonValue({ maxDepth: 4 })),
    json(fc.anything({ maxDepth: 3, withNullPrototype: true })),
    fc.constantFrom(...HOSTILE_BODIES),
    text,
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  );

  return fc
    .record({ route, otherMethod, query, headers, payload })
    .map(({ route, otherMethod, query, headers, payload }) => {
      // An HTTP request line always has a path; inject cannot send an empty one.
      const url = (route.path.startsWith('/') ? route.path : `/${route.path}`) + query;
      // Keep the fuzzer's account alive, or everything after an early self-deletion is a shallow 404.
      const body =
        typeof payload === 'string' && url.startsWith('/api/auth/owner')
          ? payload.replaceAll(GOOD_PASSWORD, 'x')
          : payload;
      return {
        method: otherMethod ?? route.method,
        url,
        headers: headers as Record<string, string>,
        ...(body === undefined ? {} : { payload: body }),
      };
    }) as fc.Arbitrary<InjectOptions & { method: string }>;
}

/** The answer to any request, however hostile: no 5xx, and a refusal is a full problem document. */
function assertWellHandled(request: InjectOptions & { method: string }, res: LightMyRequestResponse): void {
  const where = `${request.method} ${String(request.url).slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  assert.ok(res.statusCode < 500, where);
  assert.equal(res.headers['x-content-type-options'], 'nosniff', where);
  if (res.statusCode < 400) return;
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, where);
  if (request.method === 'HEAD') return;
  const body = JSON.parse(res.body);
  assert.equal(body.status, res.statusCode, where);
  assert.equal(typeof body.detail, 'string', where);
  assert.equal(typeof body.title, 'string', where);
}

forEachDatabase('security: fuzz', (ctx) => {
  /** A control user the fuzzer never acts as, a fuzzer user, and the routes to aim at. */
  async function setUp() {
    const app = await ctx.rebuild({ ...THROTTLE_ON, CORS_ORIGINS: ALLOWED_ORIGIN });
    const control = await newSession(app, 'control');
    const noteId = (
      await app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: control.auth,
        payload: { title: 'keep', content: 'me' },
      })
    ).json().id as string;
    await app.inject({
      method: 'POST',
      url: `/api/notes/${noteId}/versions`,
      headers: control.auth,
      payload: { title: 'keep 2', content: 'me too' },
    });
    const snapshot = async () => {
      const get = (url: string) =>
        app.inject({ url, headers: control.auth }).then((r) => ({ status: r.statusCode, body: r.json() }));
      return {
        note: await get(`/api/notes/${noteId}`),
        versions: await get(`/api/notes/${noteId}/versions`),
        list: await get('/api/notes'),
      };
    };
    const before = await snapshot();
    const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

    const fuzzer = await newSession(app, 'fuzzer');
    const own = (await app.inject({ method: 'POST', url: '/api/notes', headers: fuzzer.auth, payload: {} })).json();
    const doc = (await app.inject({ url: '/api/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    // Not the event stream: with a valid token it lasts as long as the token, and an injected request
    // would wait for it (test/events/live.test.ts drives it through a socket, hostile readers included).
    const paths = Object.entries(doc.paths)
      .filter(([path]) => path !== '/api/events')
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));
    paths.push(
      ...['/healthz', '/readyz', '/metrics', '/api/openapi.json', '/api/docs'].map((path) => ({ method: 'GET', path })),
    );
    // Never the control user's id, nor the fuzzer's: the forged admin token could legitimately
    // delete those accounts. A spare account is there to be deleted.
    const spare = await signup(app, uniqueName('spare'));
    const world: World = { fuzzer, paths, ids: [noteId, own.id, own.version_id, spare.id, randomUUID()] };

    async function assertControlUntouched() {
      assert.deepEqual(await snapshot(), before);
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      const relogin = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: control.username, password: GOOD_PASSWORD },
      });
      assert.equal(relogin.statusCode, 200, relogin.body);
    }
    return { app, world, own, assertControlUntouched };
  }

  test('every hostile body on every route that takes one', async () => {
    const { app, world, own, assertControlUntouched } = await setUp();
    const fill = (path: string) => path.replace('{noteID}', own.id).replace(/\{[^}]+\}/g, randomUUID());
    const targets = world.paths.filter(
      (p) => ['POST', 'PUT', 'DELETE'].includes(p.method) && !p.path.endsWith('/logout'),
    );
    for (const { method, path } of targets) {
      for (const payload of HOSTILE_BODIES) {
        const request = {
          method,
          url: fill(path),
          headers: { ...world.fuzzer.auth, 'content-type': 'application/json' },
          payload,
        };
        assertWellHandled(request, await app.inject(request));
      }
    }
    await assertControlUntouched();
  });

  test(`${RUNS} random and hostile requests: no 5xx, problem+json errors, other accounts untouched`, {
    timeout: Math.max(120_000, RUNS * 100),
  }, async () => {
    const { app, world, assertControlUntouched } = await setUp();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requests(world), async (request) => {
        const res = await app.inject(request);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        assertWellHandled(request, res);
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: true },
    );
    if (process.env.FUZZ_VERBOSE) console.log(ctx.kind, JSON.stringify([...statuses].sort((a, b) => a[0] - b[0])));
    await assertControlUntouched();
    // Enough variety to mean something: successes and several kinds of refusal.
    assert.ok(statuses.size >= 6, JSON.stringify([...statuses]));
  });
});
