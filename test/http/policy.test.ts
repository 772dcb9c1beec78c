import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import Fastify from 'fastify';
import { accessControl } from '../../src/http/access.js';
import { registerRoutePolicy } from '../../src/http/route-policy.js';
import { noStore } from '../../src/http/security-headers.js';
import { createTokenService } from '../../src/sessions/tokens.js';
import { newAdminSession } from '../helpers/auth.js';
import { forEachDatabase, JWT_SECRET, login, newSession } from '../helpers/harness.js';

interface Operation {
  security?: Array<Record<string, string[]>>;
}

/** Every documented operation with its path parameters filled in, and the scheme it documents. */
async function documentedOperations(app: import('fastify').FastifyInstance) {
  const doc = (await app.inject({ url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      url: path.replace(/\{[^}]+\}/g, () => randomUUID()),
      scheme: Object.keys(op.security?.[0] ?? {})[0] ?? 'public',
      admin: path.startsWith('/api/auth/admin'),
      path,
    })),
  );
}

const STREAMS = new Set(['GET /api/events']);

forEachDatabase('per-route policy', (ctx) => {
  test('each route enforces the access its document shows: bearer routes 401 without a token, admin routes 403 for a user', async () => {
    const operations = await documentedOperations(ctx.app);
    assert.ok(operations.length >= 25, `only ${operations.length} operations`);
    let user = await newSession(ctx.app, 'policy');
    const admin = await newAdminSession(ctx);
    const seen = new Set<string>();
    for (const op of operations) {
      const key = `${op.method} ${op.url}`;
      const anonymous = await ctx.app.inject({ method: op.method, url: op.url });
      assert.ok(anonymous.statusCode < 500, `${key} without credentials: ${anonymous.statusCode} ${anonymous.body}`);
      if (op.scheme === 'bearer') {
        assert.equal(anonymous.statusCode, 401, `${key} without a token: ${anonymous.body}`);
        // An event stream answers a valid token with a stream that lasts as long as the token
        // (test/events/live.test.ts reads it through a socket); an injected request would wait for ever.
        if (STREAMS.has(`${op.method} ${op.path}`)) continue;
        const asUser = await ctx.app.inject({ method: op.method, url: op.url, headers: user.auth });
        assert.equal(asUser.statusCode === 403, op.admin, `${key} as a user: ${asUser.statusCode} ${asUser.body}`);
        // A route that asks for the password again answers 401 reauthentication_required: the token got through.
        if (asUser.statusCode === 401)
          assert.equal(asUser.json().code, 'reauthentication_required', `${key} as a user: ${asUser.body}`);
        // Logout and "sign out everywhere else" end the user's session, and with it this access
        // token on every /api/auth route (CONTRACT.md part 3): the next operations get a new one.
        if ((await ctx.app.inject({ url: '/api/auth/me', headers: user.auth })).statusCode === 401)
          user = await login(ctx.app, user.username);
        if (op.admin) {
          const asAdmin = await ctx.app.inject({ method: op.method, url: op.url, headers: admin.auth });
          assert.ok(![401, 403].includes(asAdmin.statusCode), `${key} as an administrator: ${asAdmin.statusCode}`);
        }
      } else if (op.scheme === 'refreshCookie') {
        // The cookie routes check the cookie themselves; POST checks CSRF first (spec §4.1 rule 9).
        assert.equal(anonymous.statusCode, op.method === 'POST' ? 403 : 401, `${key}: ${anonymous.body}`);
      } else {
        assert.equal(op.scheme, 'public', key);
        assert.ok(![401, 403].includes(anonymous.statusCode), `${key} is public but answered ${anonymous.statusCode}`);
      }
      seen.add(op.scheme);
    }
    assert.deepEqual([...seen].sort(), ['bearer', 'public', 'refreshCookie']);
  });

  test('Cache-Control: no-store where a route declares it, on a path no route has, and not on a note', async () => {
    const user = await newSession(ctx.app, 'store');
    const note = await ctx.app.inject({ method: 'POST', url: '/api/notes', headers: user.auth, payload: {} });
    assert.equal(note.statusCode, 201);
    assert.equal(note.headers['cache-control'], undefined);
    for (const url of ['/api/auth/sessions', '/api/export', '/api/nothing-here', '/api/auth/nothing-here']) {
      const res = await ctx.app.inject({ url, headers: user.auth });
      assert.equal(res.headers['cache-control'], 'no-store', `${url}: ${res.statusCode}`);
    }
  });
});

const NO_PERSONAL_TOKENS = { looksLike: () => false, authenticate: async () => undefined };
const accessOptions = () => ({
  verify: createTokenService(JWT_SECRET).verify,
  findAccount: async () => undefined,
  normalizeUsername: (name: string) => name,
  personal: NO_PERSONAL_TOKENS,
  sessionIsLive: async () => true,
  accountAllows: async () => true,
});

test('a documented route that declares no policy stops start-up', async () => {
  const app = Fastify();
  registerRoutePolicy(app, { access: accessControl(app, accessOptions()) });
  assert.throws(
    () => app.get('/api/forgotten', async () => ({ open: true })),
    /route GET \/api\/forgotten declares no config\.policy/,
  );
  await app.close();
});

test('a hidden route may leave its policy out: it is public', async () => {
  const app = Fastify();
  registerRoutePolicy(app, { access: accessControl(app, accessOptions()), noStore });
  app.get('/internal', { schema: { hide: true } }, async () => ({ ok: true }));
  const res = await app.inject({ url: '/internal' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], undefined);
  await app.close();
});
