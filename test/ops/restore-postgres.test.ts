import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import { createMigrator, knownMigrations, migrateToLatest } from '../../src/db/migrate.js';
import { createScratchDatabase, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { runCli } from '../helpers/cli.js';
import { buildTestApp, newSession, testConfig } from '../helpers/harness.js';

/**
 * `vellum restore` on PostgreSQL (issue #43, finding 8) with the real pg_dump, pg_restore and psql:
 * a good dump replaces the database (the old one kept under another name); every bad one is refused
 * in one line, and the live database is left exactly as it was, with no restore copy left behind.
 */

const cli = (url: string, ...args: string[]) => runCli(args, { DATABASE_URL: url });

const dbName = (url: string) => new URL(url).pathname.slice(1);

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function databasesLike(prefix: string): Promise<string[]> {
  const rows = await query<{ datname: string }>(
    TEST_DATABASE_URL!,
    'select datname from pg_database where datname like $1',
    [`${prefix}%`],
  );
  return rows.map((r) => r.datname).sort();
}

if (TEST_DATABASE_URL !== undefined) {
  describe('vellum restore [postgres]', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-pg-restore-'));
    let live: ScratchDatabase;
    let source: ScratchDatabase;
    const dumps: Record<string, string> = {};
    let noteTitle = '';

    before(async () => {
      // The source: a Vellum database with one note, dumped in both formats.
      source = await createScratchDatabase('postgres', { migrated: true });
      const config = testConfig(source.url);
      const database = openDatabase(config.database);
      await migrateToLatest(database.db);
      const app = await buildTestApp(config, database);
      const s = await newSession(app, 'restore');
      noteTitle = `Restored ${Date.now()}`;
      await app.inject({ method: 'POST', url: '/api/notes', headers: s.auth, payload: { title: noteTitle } });
      await app.close();
      await database.close();
      const dump = (file: string, url: string, ...flags: string[]) => {
        execFileSync('pg_dump', [...flags, '-f', file, url]);
        return file;
      };
      dumps.good = dump(path.join(dir, 'good.dump'), source.url, '-Fc');
      dumps.plain = dump(path.join(dir, 'good.sql'), source.url);
      const bytes = fs.readFileSync(dumps.good);
      dumps.truncated = path.join(dir, 'truncated.dump');
      fs.writeFileSync(dumps.truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
      const text = fs.readFileSync(dumps.plain, 'utf8');
      dumps.truncatedPlain = path.join(dir, 'truncated.sql');
      fs.writeFileSync(dumps.truncatedPlain, text.slice(0, Math.floor(text.length * 0.6)));
      // Another application's database.
      const other = await createScratchDatabase('postgres');
      await query(other.url, 'create table invoices (id int primary key, total numeric)');
      dumps.other = dump(path.join(dir, 'other.dump'), other.url, '-Fc');
      await other.drop();
      // A newer Vellum: one migration this build does not know.
      await query(
        source.url,
        "insert into kysely_migration (name, timestamp) values ('2099-01-01-99-z-future', now())",
      );
      dumps.newer = dump(path.join(dir, 'newer.dump'), source.url, '-Fc');
      // An older Vellum: the first release's schema, with a note written as it wrote them.
      const old = await createScratchDatabase('postgres');
      const oldDb = openDatabase(testConfig(old.url).database);
      const { error } = await createMigrator(oldDb.db).migrateTo('2026-11-22-03-auth-events');
      if (error !== undefined) throw error;
      await oldDb.close();
      await query(
        old.url,
        `insert into users (id, username, password_hash, created_at, updated_at)
           values ('00000000-0000-4000-8000-000000000001', 'old', 'x', now(), now());
         insert into notes (id, owner_id, title, version, version_id, created_at, updated_at)
           values ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'Old', 1,
                   '00000000-0000-4000-8000-000000000003', now(), now());
         insert into note_versions (id, note_id, version, title, content, created_at)
           values ('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000002', 1, 'Old', 'old #kept', now())`,
      );
      dumps.older = dump(path.join(dir, 'older.dump'), old.url, '-Fc');
      await old.drop();
      dumps.text = path.join(dir, 'notes.txt');
      fs.writeFileSync(dumps.text, 'hello, not a dump\n');
      // The live database the restores aim at: a Vellum database of its own.
      live = await createScratchDatabase('postgres', { migrated: true });
      const liveDb = openDatabase(testConfig(live.url).database);
      await migrateToLatest(liveDb.db);
      await liveDb.close();
      await query(live.url, 'create table marker (x int)');
    });
    after(async () => {
      for (const name of await databasesLike(`${dbName(live.url)}_`))
        await query(TEST_DATABASE_URL!, `drop database if exists "${name}"`);
      await live?.drop();
      await source?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const untouched = async () => {
      assert.equal((await query(live.url, "select to_regclass('marker') as t"))[0]!.t, 'marker');
      assert.deepEqual(await databasesLike(`${dbName(live.url)}_`), [], 'no restore copy is left behind');
    };

    test('every bad file is refused in one line, and the live database stays as it was', {
      timeout: 120_000,
    }, async () => {
      const cases: Array<[string, RegExp]> = [
        [
          dumps.truncated!,
          /^vellum: the dump (could not be restored completely \(truncated or damaged\?\)|cannot be read): .+\n$/,
        ],
        [dumps.truncatedPlain!, /^vellum: the dump is incomplete \(truncated: it lacks the end pg_dump writes\)\n$/],
        [dumps.other!, /^vellum: the dump is not a Vellum database \(no kysely_migration table\)\n$/],
        [
          dumps.newer!,
          /^vellum: the dump was written by a newer Vellum \(migrations 2099-01-01-99-z-future\); restore it with that version, or an older dump with this one\n$/,
        ],
        [dumps.text!, /^vellum: the file is not a PostgreSQL dump .+\n$/],
        [path.join(dir, 'missing.dump'), /^vellum: no dump at .*missing\.dump\n$/],
      ];
      for (const [file, expected] of cases) {
        const result = await cli(live.url, 'restore', file);
        assert.equal(result.code, 1, `${file}: ${result.stderr}`);
        assert.match(result.stderr, expected, file);
        assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace');
        await untouched();
      }
    });

    test('while anyone is connected to the database, restore refuses and changes nothing', async () => {
      const holder = new pg.Client({ connectionString: live.url });
      await holder.connect();
      try {
        const result = await cli(live.url, 'restore', dumps.good!);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, /^vellum: database \S+ is in use: stop every Vellum process .+\n$/);
      } finally {
        await holder.end();
      }
      await untouched();
    });

    for (const format of ['good', 'plain'] as const) {
      test(`a ${format === 'good' ? 'custom-format' : 'plain SQL'} dump replaces the database, which is kept under another name`, {
        timeout: 120_000,
      }, async () => {
        const before = await databasesLike(`${dbName(live.url)}_before_restore_`);
        const result = await cli(live.url, 'restore', dumps[format]!);
        assert.equal(result.code, 0, result.stderr);
        assert.match(
          result.stdout,
          /^restored 1 notes and 1 versions from .+ into \S+\nthe database it replaced is kept as \S+_before_restore_\d{14}\n$/,
        );
        const rows = await query<{ title: string }>(
          live.url,
          "select convert_from(v.title, 'UTF8') as title from notes n join note_versions v on v.id = n.version_id",
        );
        assert.deepEqual(rows, [{ title: noteTitle }]);
        assert.equal((await query(live.url, "select to_regclass('marker') as t"))[0]!.t, null);
        const kept = (await databasesLike(`${dbName(live.url)}_before_restore_`)).filter((n) => !before.includes(n));
        assert.equal(kept.length, 1);
        // The previous database is intact under its new name; put it back for the next case.
        await query(onDb(live.url, kept[0]!), 'select 1');
        await query(TEST_DATABASE_URL!, `drop database "${kept[0]!}"`);
        await query(live.url, 'create table marker (x int)');
        // The service starts on the restored database (nothing newer than this build in it).
        const started = await cli(live.url, 'migrate');
        assert.equal(started.code, 0, started.stderr);
      });
    }

    test("an older Vellum's dump is restored, and this build's migrations bring it up to date", {
      timeout: 120_000,
    }, async () => {
      const result = await cli(live.url, 'restore', dumps.older!);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^restored 1 notes and 1 versions from .+ into \S+\n/);
      const migrated = await cli(live.url, 'migrate');
      assert.equal(migrated.code, 0, migrated.stderr);
      const applied = (await query<{ name: string }>(live.url, 'select name from kysely_migration')).map((r) => r.name);
      assert.deepEqual(applied.sort(), [...knownMigrations].sort());
      assert.deepEqual(await query(live.url, "select convert_from(content, 'UTF8') as content from note_versions"), [
        { content: 'old #kept' },
      ]);
    });
  });
}

function onDb(url: string, name: string): string {
  const other = new URL(url);
  other.pathname = `/${name}`;
  return other.toString();
}
