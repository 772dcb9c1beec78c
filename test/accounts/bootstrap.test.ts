import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { bootstrapAdmin, BootstrapError } from '../../src/accounts/bootstrap-admin.js';
import { createPasswordHasher } from '../../src/passwords/password-hasher.js';
import { policyFromConfig } from '../../src/passwords/password-policy.js';
import { parseDatabaseUrl } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Db } from '../../src/db/schema.js';
import { decodeJwt } from '../helpers/auth.js';
import { createScratchDatabase } from '../helpers/databases.js';
import { forEachDatabase, GOOD_PASSWORD, login, signup, uniqueName, type TestContext } from '../helpers/harness.js';

interface LogCall {
  level: string;
  args: unknown[];
}

function fakeLogger(): { log: FastifyBaseLogger; calls: LogCall[] } {
  const calls: LogCall[] = [];
  const log: Record<string, unknown> = { level: 'info' };
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
    log[level] = (...args: unknown[]) => calls.push({ level, args });
  }
  log.child = () => log;
  return { log: log as unknown as FastifyBaseLogger, calls };
}

// Production's cost, as main.ts uses without TEST_ARGON2: the PHC check below is about it.
const hasher = createPasswordHasher({ cost: 'owasp' });

function run(ctx: TestContext, db: Db, admin: { username: string; password: string } | undefined) {
  const { log, calls } = fakeLogger();
  const outcome = bootstrapAdmin({ db, policy: policyFromConfig(ctx.config, log), hasher, log }, admin);
  return { outcome, calls };
}

const userCount = async (db: Db) => (await db.selectFrom('users').select('id').execute()).length;

forEachDatabase('admin bootstrap (spec §1)', (ctx) => {
  test('fresh database, no credentials: a warning and no account', async () => {
    assert.equal(await userCount(ctx.database.db), 0);
    const { outcome, calls } = run(ctx, ctx.database.db, undefined);
    assert.equal(await outcome, 'no-credentials');
    assert.deepEqual(
      calls.map((c) => c.level),
      ['warn'],
    );
    assert.equal(await userCount(ctx.database.db), 0);
  });

  test('fresh database, invalid credentials: BootstrapError naming the problem, no account', async () => {
    const cases: Array<[{ username: string; password: string }, string]> = [
      [
        { username: 'x', password: GOOD_PASSWORD },
        'Username must be 3 to 32 characters of a-z, 0-9, "_", "." or "-", and start and end with a letter or digit',
      ],
      [
        { username: 'root', password: 'short' },
        'Password must be at least 15 characters long; a few unrelated words make a strong one',
      ],
      [
        { username: 'root', password: 'passwordpassword' },
        'This password appears in known data breaches; choose a different one',
      ],
      [
        { username: 'root', password: 'zzzzzzzzzzzzzzzzzzzz1' },
        'Password is too easy to guess: make it longer, avoid repeats and sequences like "1234" or "qwerty", or mix in other kinds of characters',
      ],
    ];
    for (const [admin, reason] of cases) {
      await assert.rejects(run(ctx, ctx.database.db, admin).outcome, (error: unknown) => {
        assert.ok(error instanceof BootstrapError);
        assert.equal(error.name, 'BootstrapError');
        assert.equal(error.message, `ADMIN credentials are invalid: ${reason}`);
        return true;
      });
    }
    assert.equal(await userCount(ctx.database.db), 0);
  });

  test('fresh database, valid credentials: the administrator is created (username normalized)', async () => {
    assert.equal(await userCount(ctx.database.db), 0);
    const { outcome, calls } = run(ctx, ctx.database.db, { username: 'RootAdmin', password: GOOD_PASSWORD });
    assert.equal(await outcome, 'created');
    assert.deepEqual(
      calls.map((c) => c.level),
      ['info'],
    );
    const row = await ctx.database.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'rootadmin')
      .executeTakeFirstOrThrow();
    assert.equal(row.is_admin, true);
    const events = await ctx.database.db
      .selectFrom('auth_events')
      .select(['kind', 'outcome', 'user_id', 'username', 'detail'])
      .execute();
    assert.deepEqual(events, [
      {
        kind: 'admin_create',
        outcome: 'success',
        user_id: row.id,
        username: 'rootadmin',
        detail: 'by start-up (ADMIN_USERNAME)',
      },
    ]);
    // Argon2id in the PHC format, at least OWASP's m = 19 MiB, t = 2, p = 1 (CONTRACT.md "Hashing").
    const phc = /^\$argon2id\$v=19\$([a-z=0-9,]+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(row.password_hash);
    assert.ok(phc, row.password_hash);
    const params = Object.fromEntries(
      phc[1]!
        .split(',')
        .map((kv) => kv.split('='))
        .map(([k, v]) => [k, Number(v)]),
    );
    assert.ok(params.m! >= 19_456 && params.t! >= 2 && params.p! >= 1, phc[1]);
    const session = await login(ctx.app, 'ROOTADMIN');
    assert.equal(decodeJwt(session.accessToken).payload.admin, true);
    const all = await ctx.app.inject({ method: 'GET', url: '/api/auth/admin/all', headers: session.auth });
    assert.equal(all.statusCode, 200);
    assert.deepEqual(
      (all.json() as Array<{ username: string; is_admin: boolean }>).map((u) => [u.username, u.is_admin]),
      [['rootadmin', true]],
    );
  });

  test('existing administrator: nothing is created and nothing logged', async () => {
    const before = await userCount(ctx.database.db);
    const other = uniqueName('second');
    const { outcome, calls } = run(ctx, ctx.database.db, { username: other, password: GOOD_PASSWORD });
    assert.equal(await outcome, 'admin-exists');
    assert.deepEqual(calls, []);
    assert.equal(await run(ctx, ctx.database.db, undefined).outcome, 'admin-exists');
    assert.equal(await userCount(ctx.database.db), before);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: other, password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 401);
  });

  test('no administrator, but the name belongs to an ordinary account: BootstrapError', async () => {
    const scratch = await createScratchDatabase(ctx.kind);
    const database = openDatabase(parseDatabaseUrl(scratch.url));
    try {
      await migrateToLatest(database.db);
      const username = uniqueName('taken');
      await database.db
        .insertInto('users')
        .values({
          id: randomUUID(),
          username,
          password_hash: 'x',
          is_admin: false,
          created_at: new Date().toISOString(),
          updated_at: new Date().toISOString(),
        })
        .execute();
      await assert.rejects(
        run(ctx, database.db, { username: username.toUpperCase(), password: GOOD_PASSWORD }).outcome,
        (error: unknown) => {
          assert.ok(error instanceof BootstrapError);
          assert.equal(
            error.message,
            `ADMIN_USERNAME "${username}" already belongs to a non-admin account; choose another name`,
          );
          return true;
        },
      );
      assert.equal(await userCount(database.db), 1);
    } finally {
      await database.close();
      await scratch.drop();
    }
  });

  test('signup still works next to a bootstrapped administrator and makes ordinary users', async () => {
    const { username } = await signup(ctx.app);
    assert.equal(decodeJwt((await login(ctx.app, username)).accessToken).payload.admin, false);
  });
});
