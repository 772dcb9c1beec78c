import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { TEST_DATABASE_URL } from '../helpers/databases.js';
import { CSRF_SECRET, GOOD_PASSWORD, JWT_SECRET, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { exitWithin, startProcess, type ServerProcess } from '../helpers/server-process.js';
import { runCli as cli } from '../helpers/cli.js';
import { entryArgs } from '../helpers/entry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const WRITERS = 4;

describe('vellum backup and restore [sqlite]', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-backup-'));
  const dbFile = path.join(dir, 'vellum.db');
  const env = { DATABASE_URL: `sqlite:${dbFile}` };
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a backup taken under concurrent writes is intact and holds every version acknowledged before it started; restore refuses a running service', {
    timeout: 120_000,
  }, async () => {
    server = startProcess(process.execPath, entryArgs('main'), {
      cwd: ROOT,
      env: {
        ...TEST_ENV,
        ...env,
        HOME: dir,
        PORT: '0',
        HOST: '127.0.0.1',
        JWT_SECRET,
        CSRF_SECRET,
        PWNED_PASSWORDS_URL: 'off',
        RATE_LIMIT: 'off',
        LOG_LEVEL: 'info',
        SHUTDOWN_DRAIN_SECONDS: '0',
      },
    });
    const base = `http://127.0.0.1:${await server.port()}`;
    const json = { 'content-type': 'application/json' };
    const username = uniqueName('backup');
    assert.equal(
      (
        await fetch(`${base}/api/auth/signup`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ username, password: GOOD_PASSWORD }),
        })
      ).status,
      201,
    );
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ username, password: GOOD_PASSWORD }),
    });
    const headers = {
      ...json,
      authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
    };

    // Writers add versions to their own note until told to stop; each answered version is acknowledged.
    const acknowledged: Array<{ note: string; version: number; content: string }> = [];
    let reached200!: () => void;
    const twoHundred = new Promise<void>((resolve) => {
      reached200 = resolve;
    });
    const acknowledge = (version: { note: string; version: number; content: string }) => {
      if (acknowledged.push(version) === 200) reached200();
    };
    let stop = false;
    const writer = async (w: number) => {
      const created = await fetch(`${base}/api/notes`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: `writer ${w}`, content: 'v1' }),
      });
      assert.equal(created.status, 201);
      const note = ((await created.json()) as { id: string }).id;
      acknowledge({ note, version: 1, content: 'v1' });
      for (let i = 2; !stop; i++) {
        const content = `writer ${w} version ${i} `.repeat(50);
        const res = await fetch(`${base}/api/notes/${note}/versions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: `writer ${w}`, content }),
        });
        assert.equal(res.status, 204, await res.text());
        acknowledge({ note, version: Number(JSON.parse(res.headers.get('etag')!)), content });
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    // A writer that fails ends the wait (and the test) at once.
    await Promise.race([writers, twoHundred]);

    const before = acknowledged.slice();
    const backupFile = path.join(dir, 'backups', 'vellum-backup.db');
    fs.mkdirSync(path.dirname(backupFile));
    const backup = await cli(['backup', backupFile], env);
    const during = acknowledged.length - before.length;
    stop = true;
    await writers;
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(
      backup.stdout,
      new RegExp(
        `^backed up \\d+ notes and \\d+ versions to ${backupFile.replace(/[.]/g, '\\.')} \\(\\d+ bytes\\)\\n$`,
      ),
    );
    assert.ok(during > 0, 'writes went on while the backup ran');
    assert.deepEqual(
      fs.readdirSync(path.dirname(backupFile)),
      ['vellum-backup.db'],
      'one self-contained file, nothing half-written',
    );

    const copy = new BetterSqlite3(backupFile, { readonly: true });
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      const stored = new Map(
        (
          copy.prepare('select note_id, version, content from note_versions').all() as Array<{
            note_id: string;
            version: number;
            content: Buffer;
          }>
        ).map((r) => [`${r.note_id}/${r.version}`, Buffer.from(r.content).toString('utf8')]),
      );
      const missing = before.filter((v) => stored.get(`${v.note}/${v.version}`) !== v.content);
      assert.deepEqual(missing, [], `all ${before.length} versions acknowledged before the backup are in it`);
    } finally {
      copy.close();
    }
    assert.deepEqual(await cli(['backup', backupFile], env), {
      code: 1,
      stdout: '',
      stderr: `vellum: ${backupFile} already exists; choose a new file name\n`,
    });

    // Restore into a running service: refused, nothing changed.
    const refused = await cli(['restore', backupFile], env);
    assert.deepEqual(refused, {
      code: 1,
      stdout: '',
      stderr: `vellum: ${dbFile} is in use: stop every Vellum process that uses it, then run restore again\n`,
    });
    const versionsNow = await fetch(`${base}/api/notes/${before[0]!.note}/versions?limit=100`, { headers });
    assert.equal(versionsNow.status, 200);

    server.child.kill('SIGTERM');
    assert.deepEqual(await exitWithin(server, 20_000), { code: 0, signal: null }, server.output());
    const restored = await cli(['restore', backupFile], env);
    assert.equal(restored.code, 0, restored.stderr);
    const [restoredLine, keptLine] = restored.stdout.split('\n');
    assert.match(
      restoredLine!,
      new RegExp(`^restored \\d+ notes and \\d+ versions from .* into ${dbFile.replace(/[.]/g, '\\.')}$`),
    );
    const kept = /^the database it replaced is kept as (.+)$/.exec(keptLine!)?.[1];
    assert.ok(kept !== undefined && fs.existsSync(kept), restored.stdout);
    assert.deepEqual(fs.readFileSync(dbFile), fs.readFileSync(backupFile), 'the database is the backup');
    // The replaced database still has everything, the versions written during the backup included.
    const old = new BetterSqlite3(kept, { readonly: true });
    try {
      const count = (old.prepare('select count(*) as n from note_versions').get() as { n: number }).n;
      assert.equal(count, acknowledged.length);
    } finally {
      old.close();
    }

    // A backup from a newer Vellum (a migration this build does not know) is refused.
    const newer = path.join(dir, 'newer.db');
    fs.copyFileSync(backupFile, newer);
    const db = new BetterSqlite3(newer);
    db.prepare(
      "insert into kysely_migration (name, timestamp) values ('2099-01-01-from-the-future', '2099-01-01T00:00:00.000Z')",
    ).run();
    db.close();
    const future = await cli(['restore', newer], env);
    assert.equal(future.code, 1);
    assert.match(
      future.stderr,
      /^vellum: the backup was written by a newer Vellum \(migrations 2099-01-01-from-the-future\)/,
    );
  });
});

// PostgreSQL backs up with its own tool; the command says so instead of doing something else.
// (`vellum restore` on PostgreSQL restores a dump: test/ops/restore-postgres.test.ts.)
if (TEST_DATABASE_URL !== undefined) {
  describe('vellum backup [postgres]', () => {
    test('points to pg_dump and exits 1', { timeout: 60_000 }, async () => {
      assert.deepEqual(
        await cli(['backup', path.join(os.tmpdir(), 'never.dump')], { DATABASE_URL: TEST_DATABASE_URL! }),
        {
          code: 1,
          stdout: '',
          stderr: `vellum: backup is for the embedded SQLite database; DATABASE_URL is PostgreSQL: back up with pg_dump -Fc, restore with vellum restore (docs/operations.md, "Back up")\n`,
        },
      );
    });
  });
}
