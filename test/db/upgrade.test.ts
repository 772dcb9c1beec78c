import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createMigrator, knownMigrations } from '../../src/db/migrate.js';
import { listSnapshots } from '../../src/db/upgrade.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { entryArgs } from '../helpers/entry.js';
import { CSRF_SECRET, JWT_SECRET, TEST_ENV } from '../helpers/harness.js';
import { exitWithin, logEntry, startProcess, type ServerProcess } from '../helpers/server-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The schema of the first release: accounts, notes, auth events. */
const OLD_SCHEMA = '2026-11-22-03-auth-events';
/** A migration of many statements (a table, indexes, columns on notes): half of it bricked SQLite (#43). */
const ORGANISE = 'migration:2026-11-24-31-a-organise';
const LAST = `migration:${[...knownMigrations].sort().at(-1)}`;

const processes: ServerProcess[] = [];
after(async () => {
  for (const proc of processes) await proc.kill();
});

function start(url: string, home: string, env: Record<string, string> = {}): ServerProcess {
  const proc = startProcess(process.execPath, entryArgs('main'), {
    cwd: ROOT,
    env: {
      ...TEST_ENV,
      HOME: home,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: url,
      JWT_SECRET,
      CSRF_SECRET,
      PWNED_PASSWORDS_URL: 'off',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  processes.push(proc);
  return proc;
}

const paused = (proc: ServerProcess, point: string) =>
  proc.waitFor(
    (line) => (logEntry(line)?.msg === `paused at ${point}` ? true : undefined),
    60_000,
    `paused at ${point}`,
  );

async function withDatabase<T>(url: string, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = openDatabase(parseDatabaseUrl(url));
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** A database of the first release holding one account and one note. */
async function oldDatabaseWithData(url: string): Promise<{ noteId: string }> {
  return withDatabase(url, async (database) => {
    const { error } = await createMigrator(database.db).migrateTo(OLD_SCHEMA);
    assert.equal(error, undefined);
    const userId = randomUUID();
    const noteId = randomUUID();
    const versionId = randomUUID();
    const now = new Date().toISOString();
    await sql`insert into users (id, username, password_hash, created_at, updated_at) values (${userId}, 'olduser', 'x', ${now}, ${now})`.execute(
      database.db,
    );
    await sql`insert into notes (id, owner_id, title, version, version_id, created_at, updated_at) values (${noteId}, ${userId}, ${Buffer.from('Old title')}, 1, ${versionId}, ${now}, ${now})`.execute(
      database.db,
    );
    await sql`insert into note_versions (id, note_id, version, title, content, created_at) values (${versionId}, ${noteId}, 1, ${Buffer.from('Old title')}, ${Buffer.from('old #content kept')}, ${now})`.execute(
      database.db,
    );
    return { noteId };
  });
}

async function appliedMigrations(url: string): Promise<string[]> {
  return withDatabase(url, async (database) =>
    (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db)).rows.map(
      (r) => r.name,
    ),
  );
}

async function tableExists(url: string, table: string): Promise<boolean> {
  return withDatabase(url, async (database) => {
    try {
      await sql`select 1 from ${sql.table(table)} limit 1`.execute(database.db);
      return true;
    } catch {
      return false;
    }
  });
}

async function assertReady(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  assert.equal(res.status, 200, await res.text());
}

async function assertDataIntact(url: string, noteId: string): Promise<void> {
  await withDatabase(url, async (database) => {
    const { rows } = await sql<{
      content: string;
      title: string;
    }>`select v.content, n.title from notes n join note_versions v on v.id = n.version_id where n.id = ${noteId}`.execute(
      database.db,
    );
    assert.equal(rows.length, 1);
    assert.equal(String(rows[0]!.content), 'old #content kept');
    assert.equal(String(rows[0]!.title), 'Old title');
  });
  assert.deepEqual(await appliedMigrations(url), [...knownMigrations].sort());
}

async function stop(proc: ServerProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  assert.equal((await exitWithin(proc, 30_000)).code, 0, proc.output());
}

for (const kind of databaseKinds) {
  describe(`a schema upgrade interrupted at any point (${kind})`, () => {
    const scratches: ScratchDatabase[] = [];
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-upgrade-'));
    after(async () => {
      for (const scratch of scratches) await scratch.drop();
      fs.rmSync(home, { recursive: true, force: true });
    });
    const scratch = async () => {
      const created = await createScratchDatabase(kind);
      scratches.push(created);
      return created.url;
    };

    test('kill -9 mid-upgrade, again and again: the next start completes it with the data intact', async () => {
      const url = await scratch();
      const { noteId } = await oldDatabaseWithData(url);
      const points = kind === 'sqlite' ? ['snapshot', ORGANISE, LAST] : [ORGANISE, LAST];
      for (const point of points) {
        const proc = start(url, home, { TEST_PAUSE_AT: point });
        await paused(proc, point);
        proc.child.kill('SIGKILL');
        await proc.exited;
        // Killed inside the organise migration: none of it stays (it used to leave `folders` behind).
        if (point === ORGANISE) {
          assert.equal(await tableExists(url, 'folders'), false);
          assert.ok(!(await appliedMigrations(url)).includes(ORGANISE.slice('migration:'.length)));
        }
      }
      if (kind === 'sqlite') {
        const snapshots = listSnapshots(url.slice('sqlite:'.length));
        assert.ok(snapshots.length >= 1, 'a copy was taken before the upgrade');
        // The copy is the database as it was: the first release's schema, with the note.
        const copy = openDatabase({ kind: 'sqlite', filename: snapshots.sort()[0]! });
        try {
          const { rows } = await sql<{ n: number }>`select count(*) as n from notes`.execute(copy.db);
          assert.equal(Number(rows[0]!.n), 1);
        } finally {
          await copy.close();
        }
      }
      const proc = start(url, home);
      const port = await proc.port();
      await assertReady(port);
      await stop(proc);
      await assertDataIntact(url, noteId);
      if (kind === 'sqlite') {
        // The start after a successful one removes the copies.
        const again = start(url, home);
        await again.port();
        await stop(again);
        assert.deepEqual(listSnapshots(url.slice('sqlite:'.length)), []);
      }
    });

    test('SIGTERM mid-migration: that migration commits, the process exits 0, the next start finishes', async () => {
      const url = await scratch();
      const { noteId } = await oldDatabaseWithData(url);
      const proc = start(url, home, { TEST_PAUSE_AT: ORGANISE });
      await paused(proc, ORGANISE);
      proc.child.kill('SIGTERM');
      assert.equal((await exitWithin(proc, 30_000)).code, 0, proc.output());
      const applied = await appliedMigrations(url);
      assert.ok(applied.includes(ORGANISE.slice('migration:'.length)));
      assert.ok(applied.length < knownMigrations.length, 'no migration after it started');
      const next = start(url, home);
      await assertReady(await next.port());
      await stop(next);
      await assertDataIntact(url, noteId);
    });

    test('two instances starting together on a new database: the second waits, both serve', async () => {
      const url = await scratch();
      const first = start(url, home, { TEST_PAUSE_AT: ORGANISE });
      await paused(first, ORGANISE);
      const second = start(url, home);
      // The second is held by the first's migration lock, not failed.
      if (kind === 'sqlite') {
        await second.waitFor(
          (line) => (logEntry(line)?.msg?.includes('another process is migrating') ? true : undefined),
          60_000,
          'the second instance waiting',
        );
      } else {
        await withDatabase(url, async (database) => {
          for (;;) {
            const { rows } = await sql<{
              n: number;
            }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
              database.db,
            );
            if (rows[0]!.n > 0) return;
            assert.equal(second.child.exitCode, null, second.output());
          }
        });
      }
      first.child.kill('SIGUSR2');
      const ports = await Promise.all([first.port(), second.port()]);
      for (const port of ports) await assertReady(port);
      await Promise.all([stop(first), stop(second)]);
      assert.deepEqual(await appliedMigrations(url), [...knownMigrations].sort());
    });

    test('the tags back-fill after an upgrade runs once the server listens; /readyz says so meanwhile', async () => {
      const url = await scratch();
      const { noteId } = await oldDatabaseWithData(url);
      const proc = start(url, home, { TEST_PAUSE_AT: 'maintenance:tags-backfill' });
      const port = await proc.port();
      await paused(proc, 'maintenance:tags-backfill');
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      const during = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(during.status, 200);
      assert.deepEqual(((await during.json()) as { background?: string[] }).background, ['tags-backfill']);
      proc.child.kill('SIGUSR2');
      await proc.waitFor(
        (line) =>
          logEntry(line)?.msg?.startsWith('maintenance tags-backfill: derived the tags of 1 note') ? true : undefined,
        60_000,
        'the back-fill',
      );
      const afterwards = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(afterwards.status, 200);
      assert.equal(((await afterwards.json()) as { background?: string[] }).background, undefined);
      await stop(proc);
      await withDatabase(url, async (database) => {
        const { rows } = await sql<{ tags: string | null }>`select tags from notes where id = ${noteId}`.execute(
          database.db,
        );
        assert.equal(rows[0]!.tags, 'content');
      });
    });

    test('two instances starting at the same instant on a new database both serve', async () => {
      const url = await scratch();
      const both = [start(url, home), start(url, home)];
      const ports = await Promise.all(both.map((proc) => proc.port()));
      for (const port of ports) await assertReady(port);
      await Promise.all(both.map(stop));
    });
  });
}
