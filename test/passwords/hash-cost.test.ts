import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { forEachDatabase, GOOD_PASSWORD, login, signup, type TestContext } from '../helpers/harness.js';
import { entryArgs } from '../helpers/entry.js';

// The suite hashes at a cheap, test-only Argon2 cost (TEST_ARGON2=cheap, see helpers/harness.ts).
// These tests hold the two promises that make that safe: production never accepts the setting,
// and without it every new hash has OWASP's parameters.

const ROOT = path.resolve(import.meta.dirname, '../..');
const secret = () => randomBytes(32).toString('hex');

/** The m, t and p of a stored Argon2id PHC string. */
function phcParams(hash: string): Record<string, number> {
  const phc = /^\$argon2id\$v=19\$([a-z=0-9,]+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(hash);
  assert.ok(phc, hash);
  return Object.fromEntries(
    phc[1]!
      .split(',')
      .map((kv) => kv.split('='))
      .map(([k, v]) => [k!, Number(v)]),
  );
}

describe("TEST_ARGON2: the test suite's cheap hash cost", () => {
  test('refused unless NODE_ENV=test, whatever else is set', () => {
    for (const nodeEnv of ['production', 'development', undefined]) {
      const env = {
        JWT_SECRET: secret(),
        CSRF_SECRET: secret(),
        TEST_ARGON2: 'cheap',
        ...(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }),
      };
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(
            error.message,
            /^TEST_ARGON2=cheap is for the test suite only and is refused unless NODE_ENV=test \(NODE_ENV is .+\); remove it$/,
          );
          return true;
        },
        String(nodeEnv),
      );
    }
  });

  test('accepted with NODE_ENV=test; any other value is refused even there; unset means OWASP', () => {
    assert.equal(loadConfig({ NODE_ENV: 'test', TEST_ARGON2: 'cheap' }).argon2Cost, 'test-cheap');
    for (const value of ['on', 'owasp', 'CHEAP', '1']) {
      assert.throws(
        () => loadConfig({ NODE_ENV: 'test', TEST_ARGON2: value }),
        /^ConfigError: TEST_ARGON2 must be "cheap" or unset/,
        value,
      );
    }
    assert.equal(loadConfig({ NODE_ENV: 'test' }).argon2Cost, 'owasp');
    assert.equal(loadConfig({ NODE_ENV: 'test', TEST_ARGON2: ' ' }).argon2Cost, 'owasp');
    assert.equal(
      loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret(), CSRF_SECRET: secret() }).argon2Cost,
      'owasp',
    );
  });

  test('a production server given it does not start: exit 2 and the reason', { timeout: 60_000 }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-argon2-'));
    try {
      const run = spawnSync(process.execPath, entryArgs('main'), {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          NODE_ENV: 'production',
          TEST_ARGON2: 'cheap',
          JWT_SECRET: secret(),
          CSRF_SECRET: secret(),
          DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
          PORT: '0',
        },
        encoding: 'utf8',
        timeout: 50_000,
      });
      assert.equal(run.status, 2, run.stderr);
      assert.equal(
        run.stderr,
        'vellum: configuration error: TEST_ARGON2=cheap is for the test suite only and is refused unless NODE_ENV=test (NODE_ENV is "production"); remove it\n',
      );
      assert.deepEqual(fs.readdirSync(dir), [], 'refused before the database was opened');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

forEachDatabase('stored password hashes', (ctx: TestContext) => {
  const storedHash = async (id: string) =>
    (await ctx.database.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow())
      .password_hash;

  test("without TEST_ARGON2 a new hash has OWASP's parameters exactly: m=19456 (19 MiB), t=2, p=1", async () => {
    const app = await ctx.rebuild({ TEST_ARGON2: '' });
    assert.equal(ctx.config.argon2Cost, 'owasp');
    const { id, username } = await signup(app);
    assert.deepEqual(phcParams(await storedHash(id)), { m: 19_456, t: 2, p: 1 });
    // A cheap instance still verifies it: the cost is read from the stored hash.
    await login(await ctx.rebuild(), username);
  });

  test("with TEST_ARGON2=cheap (the suite's default) a new hash is cheap, and a production instance verifies it", async () => {
    const app = await ctx.rebuild();
    assert.equal(ctx.config.argon2Cost, 'test-cheap');
    const { id, username } = await signup(app);
    assert.deepEqual(phcParams(await storedHash(id)), { m: 64, t: 1, p: 1 });
    const session = await login(await ctx.rebuild({ TEST_ARGON2: '' }), username, GOOD_PASSWORD);
    assert.equal(session.username, username);
  });
});
