import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { insertRefreshToken } from '../../src/sessions/refresh-token.repository.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { cookie as cookieOf } from '../helpers/harness.js';
import { REFRESH, refreshSession } from '../helpers/auth.js';
import { createScratchDatabase, databaseKinds, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { buildTestApp, GOOD_PASSWORD, login, signup, testConfig, uniqueName } from '../helpers/harness.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const NEW_PASSWORD = 'amber-Kestrel-orchard-77-slowly';
const SHORT_PASSWORD_MESSAGE = 'Password must be at least 15 characters long; a few unrelated words make a strong one';

function assertOutcome(result: CliResult, code: number, stdout: string, stderr: string): void {
  assert.deepEqual(result, { code, stdout, stderr });
}

/** A port on which nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// The two databases' halves side by side (each one's tests in order): they wait on the CLI
// processes they start.
describe('cli on each database', { concurrency: databaseKinds.length }, () => {
  for (const kind of databaseKinds) {
    describe(`cli [${kind}]`, { concurrency: 1 }, () => {
      let scratch: ScratchDatabase;
      let database: Database;
      let app: FastifyInstance;
      let env: Record<string, string>;
      const cli = (args: string[], extra: Record<string, string> = {}, input?: string) =>
        runCli(args, { PWNED_PASSWORDS_URL: 'off', ...env, ...extra }, { input });

      before(async () => {
        scratch = await createScratchDatabase(kind);
        env = { DATABASE_URL: scratch.url };
        const config = testConfig(scratch.url);
        database = openDatabase(config.database);
        app = await buildTestApp(config, database);
      });
      after(async () => {
        await app?.close();
        await database?.close();
        await scratch?.drop();
      });

      test('migrate applies every migration once, then reports the database up to date', async () => {
        const first = await cli(['migrate']);
        const applied = (
          (await database.db
            .selectFrom('kysely_migration' as never)
            .select('name' as never)
            .execute()) as Array<{ name: string }>
        )
          .map((m) => m.name)
          .sort();
        assert.ok(applied.length >= 2, JSON.stringify(applied));
        assertOutcome(first, 0, `applied: ${applied.join(', ')}\n`, '');
        assertOutcome(await cli(['migrate']), 0, 'database is up to date\n', '');
        const ready = await app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 200, ready.body);
      });

      test('create-admin makes an administrator who can log in over HTTP', async () => {
        const name = uniqueName('Root');
        assertOutcome(
          await cli(['create-admin', name], { VELLUM_PASSWORD: GOOD_PASSWORD }),
          0,
          `created administrator "${name.toLowerCase()}"\n`,
          '',
        );
        const res = await app.inject({
          method: 'POST',
          url: '/api/auth/login?includeUser=true',
          payload: { username: name.toLowerCase(), password: GOOD_PASSWORD },
        });
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as { access_token: string; user: { id: string; username: string; is_admin: boolean } };
        assert.equal(body.user.username, name.toLowerCase());
        assert.equal(body.user.is_admin, true);
        const all = await app.inject({
          method: 'GET',
          url: '/api/auth/admin/all',
          headers: { authorization: `Bearer ${body.access_token}` },
        });
        assert.equal(all.statusCode, 200, all.body);

        assertOutcome(
          await cli(['create-admin', name], { VELLUM_PASSWORD: GOOD_PASSWORD }),
          1,
          '',
          `vellum: user "${name.toLowerCase()}" already exists\n`,
        );
        // Through the accounts service, as signup: both attempts are in the audit trail.
        const events = await database.db
          .selectFrom('auth_events')
          .select(['kind', 'outcome', 'user_id', 'detail'])
          .where('username', '=', name.toLowerCase())
          .where('kind', '=', 'admin_create')
          .orderBy('created_at')
          .execute();
        assert.deepEqual(
          events.map((e) => [e.kind, e.outcome, e.detail]),
          [
            ['admin_create', 'success', 'by the vellum CLI'],
            ['admin_create', 'failure', 'username taken'],
          ],
        );
        assert.equal(events[0]!.user_id, body.user.id);
      });

      test('create-admin reads the password from standard input too', async () => {
        const name = uniqueName('stdin');
        assertOutcome(
          await cli(['create-admin', name], {}, `${GOOD_PASSWORD}\nignored second line\n`),
          0,
          `created administrator "${name}"\n`,
          '',
        );
        await login(app, name, GOOD_PASSWORD);
      });

      test('create-admin refuses an invalid password or username with the reason, exit 1', async () => {
        const name = uniqueName('weak');
        assertOutcome(
          await cli(['create-admin', name], { VELLUM_PASSWORD: 'short' }),
          1,
          '',
          `vellum: ${SHORT_PASSWORD_MESSAGE}\n`,
        );
        const res = await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: name, password: 'short' },
        });
        assert.equal(res.statusCode, 401, 'no account was created');
        const bad = await cli(['create-admin', 'x!'], { VELLUM_PASSWORD: GOOD_PASSWORD });
        assert.equal(bad.code, 1);
        assert.equal(bad.stdout, '');
        assert.match(bad.stderr, /^vellum: .*3 to 32 characters.*\n$/s);
        assertOutcome(
          await cli(['create-admin'], { VELLUM_PASSWORD: GOOD_PASSWORD }),
          1,
          '',
          'vellum: give a USERNAME (or set ADMIN_USERNAME)\n',
        );
      });

      test('reset-password takes the password on stdin and ends every session of the user', async () => {
        const { username } = await signup(app, uniqueName('Reset').toLowerCase());
        const first = await login(app, username);
        const second = await login(app, username);
        assertOutcome(
          await cli(['reset-password', username.toUpperCase()], {}, `${NEW_PASSWORD}\n`),
          0,
          `password reset for "${username}"; all of its sessions were ended\n`,
          '',
        );
        for (const session of [first, second]) {
          const res = await refreshSession(app, session.refreshToken);
          assert.equal(res.statusCode, 401, res.body);
        }
        const old = await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username, password: GOOD_PASSWORD },
        });
        assert.equal(old.statusCode, 401);
        await login(app, username, NEW_PASSWORD);
        const reset = await database.db
          .selectFrom('auth_events')
          .select(['outcome', 'detail'])
          .where('username', '=', username)
          .where('kind', '=', 'password_reset')
          .execute();
        assert.deepEqual(reset, [{ outcome: 'success', detail: 'by the vellum CLI; all sessions ended' }]);

        assertOutcome(
          await cli(['reset-password', 'ghost-of-nobody'], {}, `${NEW_PASSWORD}\n`),
          1,
          '',
          'vellum: no user "ghost-of-nobody"\n',
        );
        assertOutcome(
          await cli(['reset-password', username], {}, 'short\n'),
          1,
          '',
          `vellum: ${SHORT_PASSWORD_MESSAGE}\n`,
        );
        await login(app, username, NEW_PASSWORD);
        // A usage error (exit 2), told before the database is opened: nothing is created or migrated.
        assertOutcome(
          await cli(['reset-password'], {}, `${NEW_PASSWORD}\n`),
          2,
          '',
          'vellum: reset-password needs a USERNAME; run "vellum reset-password --help"\n',
        );
      });

      test('prune-sessions deletes tokens that can never be used again and keeps live sessions', async () => {
        assert.equal((await cli(['prune-sessions'])).code, 0); // whatever earlier tests left behind
        const { username, id: userId } = await signup(app, uniqueName('prune'));
        const session = await login(app, username);
        const rotated = await refreshSession(app, session.refreshToken); // the first token is now revoked, its session live
        assert.equal(rotated.statusCode, 200, rotated.body);
        const liveToken = cookieOf(rotated, REFRESH)!.value;
        const past = new Date(Date.now() - 86_400_000).toISOString();
        const future = new Date(Date.now() + 86_400_000).toISOString();
        const token = (expires: string) => ({
          id: randomUUID(),
          user_id: userId,
          family_id: randomUUID(),
          parent_id: null,
          token_hash: randomBytes(32).toString('hex'),
          expires_at: expires,
          created_at: past,
          user_agent: null,
          ip_address: null,
        });
        const expired = token(past);
        const deadFamily = token(future);
        await insertRefreshToken(database.db, expired);
        await insertRefreshToken(database.db, deadFamily);
        await database.db
          .updateTable('refresh_tokens')
          .set({ revoked: true, revoked_at: past })
          .where('id', '=', deadFamily.id)
          .execute();

        assertOutcome(await cli(['prune-sessions']), 0, 'deleted 2 refresh tokens\n', '');
        const left = await database.db
          .selectFrom('refresh_tokens')
          .select(['id', 'revoked'])
          .where('user_id', '=', userId)
          .execute();
        assert.equal(left.length, 2, JSON.stringify(left));
        assert.ok(left.every((row) => row.id !== expired.id && row.id !== deadFamily.id));
        const again = await refreshSession(app, liveToken);
        assert.equal(again.statusCode, 200, again.body);
        assertOutcome(await cli(['prune-sessions']), 0, 'deleted 0 refresh tokens\n', '');
      });

      test('prune-history applies HISTORY_RETENTION and prints the versions it deleted', async () => {
        const session = await login(app, (await signup(app, uniqueName('history'))).username);
        const created = await app.inject({
          method: 'POST',
          url: '/api/notes',
          headers: session.auth,
          payload: { title: 't', content: '1' },
        });
        const noteId = (created.json() as { id: string }).id;
        for (const content of ['2', '3', '4']) {
          const res = await app.inject({
            method: 'POST',
            url: `/api/notes/${noteId}/versions`,
            headers: session.auth,
            payload: { title: 't', content },
          });
          assert.equal(res.statusCode, 204, res.body);
        }
        await database.db
          .updateTable('note_versions')
          .set({ created_at: '2000-01-01T00:00:00.000Z' })
          .where('note_id', '=', noteId)
          .where('version', 'in', [1, 2, 4])
          .execute();
        assertOutcome(await cli(['prune-history']), 0, 'HISTORY_RETENTION is off: every version is kept\n', '');
        // 4 is current, 3 is younger than a day.
        assertOutcome(
          await cli(['prune-history'], { HISTORY_RETENTION: 'all=1d' }),
          0,
          `note ${noteId}: deleted versions 1-2\ndeleted 2 versions of 1 notes\n`,
          '',
        );
        assertOutcome(
          await cli(['prune-history'], { HISTORY_RETENTION: 'all=1d' }),
          0,
          'deleted 0 versions of 0 notes\n',
          '',
        );
        assertOutcome(
          await cli(['prune-history'], { HISTORY_RETENTION: 'all=1' }),
          1,
          '',
          'vellum: HISTORY_RETENTION must be "off" or tiers like "all=30d,daily=365d,weekly=forever" ("all=1" is not NAME=<n>d or NAME=forever), got "all=1"\n',
        );
      });

      test('log lines go to stderr, never into the result on stdout', async () => {
        const name = uniqueName('logs');
        const result = await cli(['create-admin', name], {
          VELLUM_PASSWORD: GOOD_PASSWORD,
          LOG_LEVEL: 'info',
          PWNED_PASSWORDS_URL: `http://127.0.0.1:${await closedPort()}`,
        });
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stdout, `created administrator "${name}"\n`);
        assert.match(result.stderr, /breached-password API unreachable; using the offline list/);
        // One line, with the reason and no stack trace: an outage of that API is expected offline.
        const warning = result.stderr.split('\n').find((line) => line.includes('breached-password'))!;
        assert.match(JSON.parse(warning).reason, /fetch failed: connect ECONNREFUSED/);
        assert.doesNotMatch(warning, /"stack"|\\n\s+at /);
      });
    });
  }
});

describe('cli without a valid command', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-cli-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('an unknown command exits 2 with a one-line hint and touches no database', async () => {
    const file = path.join(dir, 'never.db');
    const result = await runCli(['frobnicate'], { DATABASE_URL: `sqlite:${file}` });
    assertOutcome(result, 2, '', 'vellum: unknown command "frobnicate"; run "vellum --help" for the commands\n');
    assert.equal(fs.existsSync(file), false, 'the database file was created');
    if (TEST_DATABASE_URL !== undefined) {
      // Not even a connection: a database that does not exist makes no difference.
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = '/vellum_no_such_database';
      const pg = await runCli(['frobnicate'], { DATABASE_URL: url.toString() });
      assertOutcome(pg, 2, '', 'vellum: unknown command "frobnicate"; run "vellum --help" for the commands\n');
    }
  });

  test('a database that cannot be opened or reached: one line naming why, exit 1, no stack trace', async () => {
    const notADatabase = path.join(dir, 'notes.txt');
    fs.writeFileSync(notADatabase, 'just some text, not a database\n'.repeat(100));
    const refused = [
      [`sqlite:${notADatabase}`, /^vellum: failed: .*file is not a database\n$/],
      // Nothing listens on port 1.
      ['postgres://postgres@127.0.0.1:1/vellum', /^vellum: failed: .*ECONNREFUSED.*\n$/],
    ] as const;
    for (const [url, stderr] of refused) {
      const result = await runCli(['migrate'], { DATABASE_URL: url });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, stderr);
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
    }
    // A usage error is told before anything is opened: no database file appears.
    const file = path.join(dir, 'untouched.db');
    const usage = await runCli(['reset-password'], { DATABASE_URL: `sqlite:${file}` });
    assertOutcome(usage, 2, '', 'vellum: reset-password needs a USERNAME; run "vellum reset-password --help"\n');
    assert.equal(fs.existsSync(file), false, 'the database file was created');
  });

  test('no command prints the usage to stderr and exits 2; --help, -h and help print it to stdout and exit 0', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'none.db')}` };
    const none = await runCli([], env);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /^Usage: vellum <command> \[arguments\]\n/);
    for (const args of [['help'], ['--help'], ['-h']]) {
      const help = await runCli(args, env);
      assertOutcome(help, 0, none.stderr, '');
      for (const command of ['migrate', 'create-admin', 'reset-password', 'prune-sessions', 'maintenance', 'help']) {
        assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'), `${args.join(' ')} lists ${command}`);
      }
      assert.match(help.stdout, /-h, --help/);
    }
    assert.equal(fs.existsSync(path.join(dir, 'none.db')), false);
  });

  test("vellum COMMAND --help and vellum help COMMAND print that command's usage without running it", async () => {
    const file = path.join(dir, 'help.db');
    for (const args of [
      ['create-admin', '--help'],
      ['help', 'create-admin'],
      ['create-admin', '-h', 'someone'],
    ]) {
      const result = await runCli(args, { DATABASE_URL: `sqlite:${file}` });
      assert.equal(result.code, 0, args.join(' '));
      assert.equal(result.stderr, '');
      assert.match(result.stdout, /^Usage: vellum create-admin \[USERNAME\]\n\nCreate an administrator/);
      assert.match(result.stdout, /VELLUM_PASSWORD/);
    }
    assert.equal(fs.existsSync(file), false, 'help ran nothing');
    assertOutcome(
      await runCli(['help', 'nope'], { DATABASE_URL: `sqlite:${file}` }),
      2,
      '',
      'vellum: unknown command "nope"; run "vellum --help" for the commands\n',
    );
  });

  test('an unknown option or a surplus argument exits 2 with a one-line reason', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'opt.db')}` };
    assertOutcome(
      await runCli(['migrate', '--force'], env),
      2,
      '',
      'vellum: Unknown option \'--force\'; run "vellum --help" for the commands\n',
    );
    assertOutcome(
      await runCli(['migrate', 'now'], env),
      2,
      '',
      'vellum: migrate takes no arguments; run "vellum migrate --help"\n',
    );
    assertOutcome(
      await runCli(['reset-password', 'a', 'b'], env),
      2,
      '',
      'vellum: reset-password takes at most 1 argument; run "vellum reset-password --help"\n',
    );
    assert.equal(fs.existsSync(path.join(dir, 'opt.db')), false);
  });
});
