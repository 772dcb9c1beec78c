import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { bearer, cookieValue, CSRF_SECRET_COOKIE, getCsrf, postRefresh, REFRESH } from '../helpers/auth.js';
import {
  CSRF_SECRET,
  forEachDatabase,
  GOOD_PASSWORD,
  JWT_SECRET,
  testHasher,
  type TestContext,
  uniqueName,
} from '../helpers/harness.js';
import { captureLogs } from '../helpers/logs.js';

const NEW_PASSWORD = 'amber-Orchard-compass-77-softly';
const GOOD_SECRET = randomBytes(32).toString('base64url');

describe('production refuses placeholder secrets', () => {
  const production = (overrides: Record<string, string>) =>
    loadConfig({
      NODE_ENV: 'production',
      JWT_SECRET: GOOD_SECRET,
      CSRF_SECRET: randomBytes(32).toString('hex'),
      ...overrides,
    });

  const placeholders = [
    'changeme-changeme-changeme-changeme',
    'please-CHANGE_ME-0a8f7d6e5c4b3a2918a7',
    'replace-this-with-0123456789abcdefghij',
    'secretsecretsecretsecretsecretsecret',
    'my-jwt-secret-is-this-secret-value-ok',
    'x'.repeat(40),
    '0'.repeat(64),
    'abcabcabcabcabcabcabcabcabcabcabcabc',
    'Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3',
    'your-placeholder-value-0123456789abcdef',
    'default-jwt-key-0123456789abcdefghijklmn',
    'example-0123456789abcdefghijklmnopqrstuv',
    'insecure-dev-key-0123456789abcdefghijklm',
  ];

  test('each placeholder, in either variable, stops start-up with a message naming it', () => {
    for (const value of placeholders) {
      assert.ok(value.length >= 32, value);
      for (const name of ['JWT_SECRET', 'CSRF_SECRET']) {
        assert.throws(
          () => production({ [name]: value }),
          (error: unknown) => {
            assert.ok(error instanceof ConfigError, String(error));
            assert.equal(
              error.message,
              `${name} looks like a placeholder or default value; generate a random one, e.g. openssl rand -base64 48`,
            );
            return true;
          },
          `${name}=${value}`,
        );
      }
    }
  });

  test("generated secrets pass, and so do the test suite's; short and missing ones are still refused", () => {
    for (let i = 0; i < 50; i++) {
      const config = production({
        JWT_SECRET: randomBytes(32).toString('base64'),
        CSRF_SECRET: randomBytes(24).toString('hex'),
      });
      assert.equal(config.production, true);
    }
    assert.equal(production({ JWT_SECRET, CSRF_SECRET }).jwtSecret, JWT_SECRET);
    assert.throws(() => production({ JWT_SECRET: 'a1b2c3d4e5f6' }), /JWT_SECRET must be at least 32 characters long/);
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', CSRF_SECRET: GOOD_SECRET }),
      /JWT_SECRET is required when NODE_ENV=production/,
    );
  });

  test('development still starts with them (it is production that must not)', () => {
    const config = loadConfig({ JWT_SECRET: placeholders[0]!, CSRF_SECRET: placeholders[3]! });
    assert.equal(config.jwtSecret, placeholders[0]);
  });
});

test('the logger censors every redacted path', () => {
  const logs = captureLogs('trace');
  logs.logger.info(
    {
      req: {
        headers: { authorization: 'Bearer SECRET-A', cookie: 'app.refresh_token=SECRET-B', 'x-csrf-token': 'SECRET-C' },
      },
      res: { headers: { 'set-cookie': 'app.refresh_token=SECRET-D' } },
      body: { password: 'SECRET-E', old_password: 'SECRET-F', new_password: 'SECRET-G' },
      reply: { access_token: 'SECRET-H', refresh_token: 'SECRET-I', token: 'SECRET-J' },
    },
    'everything at once',
  );
  assert.equal(logs.lines.length, 1);
  assert.doesNotMatch(logs.lines[0]!, /SECRET-/);
  assert.equal(logs.lines[0]!.match(/\[redacted\]/g)?.length, 10);
});

/** What a session leaves behind: every secret it used, to look for afterwards. */
interface Script {
  username: string;
  secrets: string[];
  refreshTokens: string[];
}

/** signup, login, a failed login, refresh, a failed and a good password change, logout. */
async function scriptedSession(app: Awaited<ReturnType<typeof buildApp>>): Promise<Script> {
  const username = uniqueName('hygiene');
  const secrets: string[] = [GOOD_PASSWORD, NEW_PASSWORD];
  const refreshTokens: string[] = [];
  const ok = (res: { statusCode: number; body: string }, status: number) =>
    assert.equal(res.statusCode, status, res.body);

  ok(
    await app.inject({ method: 'POST', url: '/api/auth/signup', payload: { username, password: GOOD_PASSWORD } }),
    201,
  );
  ok(await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: NEW_PASSWORD } }), 401);
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login?includeUser=true',
    payload: { username, password: GOOD_PASSWORD },
  });
  ok(login, 200);
  const access = login.json().access_token as string;
  refreshTokens.push(cookieValue(login, REFRESH)!);
  ok(await app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(access) }), 200);

  const csrf = await getCsrf(app, refreshTokens[0]!);
  const refreshed = await postRefresh(app, refreshTokens[0]!, csrf);
  ok(refreshed, 200);
  refreshTokens.push(cookieValue(refreshed, REFRESH)!);
  secrets.push(csrf.token, csrf.secret, refreshed.json().access_token);

  const change = (payload: object) =>
    app.inject({ method: 'PUT', url: '/api/auth/owner/', headers: bearer(access), payload });
  ok(await change({ old_password: NEW_PASSWORD, new_password: GOOD_PASSWORD }), 401);
  const changed = await change({ old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD });
  ok(changed, 200);
  refreshTokens.push(cookieValue(changed, REFRESH)!);
  secrets.push(access, changed.json().access_token);
  // The change ended the first session: its access token is refused on /api/auth, the new one logs out.
  ok(await app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(access) }), 401);
  ok(
    await app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: bearer(changed.json().access_token as string),
    }),
    204,
  );

  for (const token of [...secrets.filter((s) => s.split('.').length === 3), ...refreshTokens]) {
    secrets.push(token.split('.')[2]!); // a signature alone would do to recognise a token
  }
  return { username, secrets: [...secrets, ...refreshTokens], refreshTokens };
}

forEachDatabase('no secret in logs or storage', (ctx) => {
  test('at level trace, no log line carries a password or a token', async () => {
    const logs = captureLogs('trace');
    const app = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: logs.logger,
      hasher: testHasher(ctx.config.argon2Cost),
    });
    let script: Script;
    try {
      await app.ready();
      script = await scriptedSession(app);
      // Errors are logged with their details; a malformed body must not bring its password along.
      const bad = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: `{"username":"${script.username}","password":"${GOOD_PASSWORD}"`,
      });
      assert.equal(bad.statusCode, 400);
    } finally {
      await app.close();
    }
    const requests = logs.lines.filter((line) => line.includes('"msg":"request"'));
    assert.equal(requests.length, 11, 'one line per request of the script');
    for (const line of logs.lines) {
      for (const secret of script.secrets) assert.ok(!line.includes(secret), `a secret in the log line ${line}`);
    }
  });

  test('after a session, no table or column holds a raw password or token', async () => {
    const script = await scriptedSession(ctx.app);
    const dump = await dumpDatabase(ctx);
    // The dump does see the data, in the forms that may be stored.
    assert.ok(dump.includes(script.username));
    assert.ok(dump.includes('$argon2id$'));
    for (const token of script.refreshTokens) {
      assert.ok(
        dump.includes(createHash('sha256').update(token).digest('hex')),
        'refresh tokens are stored as SHA-256',
      );
    }
    for (const secret of script.secrets) {
      assert.ok(!dump.includes(secret), `${secret.slice(0, 12)}… is stored`);
      assert.ok(!dump.includes(secret.toLowerCase()), `${secret.slice(0, 12)}… is stored in lower case`);
      assert.ok(!dump.includes(Buffer.from(secret).toString('base64')), `${secret.slice(0, 12)}… is stored in base64`);
    }
  });
});

/** Every row of every table, every column, as text (bytes as UTF-8 and as hex). */
async function dumpDatabase(ctx: TestContext): Promise<string> {
  const db = ctx.database.db;
  const tables =
    ctx.kind === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  const names = tables.rows.map((t) => t.name);
  for (const expected of ['users', 'refresh_tokens', 'notes', 'note_versions', 'auth_events'])
    assert.ok(names.includes(expected), expected);
  const parts: string[] = [];
  for (const name of names) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    for (const row of rows.rows) {
      for (const [column, value] of Object.entries(row)) {
        const text =
          Buffer.isBuffer(value) || value instanceof Uint8Array
            ? `${Buffer.from(value).toString('utf8')} ${Buffer.from(value).toString('hex')}`
            : value instanceof Date
              ? value.toISOString()
              : String(value);
        parts.push(`${name}.${column}=${text}`);
      }
    }
  }
  return parts.join('\n');
}
