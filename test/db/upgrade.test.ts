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

/**
 * /readyz answers 200. Its database check has a budget (READINESS_BUDGET_MS, 1.5 s): on a saturated
 * machine the first probes after a start can miss it and answer 503 database_unavailable, which a
 * balancer would see and probe again. So does this, on that answer only, a few times; any other
 * answer fails at once.
 */
async function assertReady(proc: ServerProcess, port: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    const body = await res.text();
    if (res.status === 200) return;
    const slow = res.status === 503 && body.includes('"database_unavailable"');
    if (!slow || attempt === 5) {
      assert.fail(`/readyz answered ${res.status} ${body} (attempt ${attempt}); output:\n${proc.output()}`);
    }
  }
}

/**
 * Runs one step of a test of several processes; a failure names the step and carries the output of
 * every process so far (a start that fails or hangs on CI then explains itself).
 */
async function step<T>(what: string, procs: Record<string, ServerProcess>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const outputs = Object.entries(procs).map(
      ([name, proc]) =>
        `--- ${name} (${proc.child.exitCode === null && proc.child.signalCode === null ? 'running' : `exited ${proc.child.exitCode ?? proc.child.signalCode}`}):\n${proc.output()}`,
    );
    throw new Error(
      `step failed: ${what}: ${error instanceof Error ? error.message : String(error)}\n${outputs.join('\n')}`,
      {
        cause: error,
      },
    );
  }
}

/** The migrations a process applied itself, from its "applied database migrations" line. */
function appliedBy(proc: ServerProcess): string[] {
  for (const line of proc.lines) {
    const entry = logEntry(line);
    if (entry?.msg === 'applied database migrations') return entry.applied as string[];
  }
  return [];
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

// The two databases' halves side by side (each one's tests one after another): they spend their
// time waiting for the servers they start, and share nothing but `processes`.
describe('schema upgrades', { concurrency: databaseKinds.length }, () => {
  for (const kind of databaseKinds) {
    describe(`a schema upgrade interrupted at any point (${kind})`, { concurrency: 1 }, () => {
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
        await assertReady(proc, port);
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

      test('SIGTERM mid-upgrade: the migration in progress commits, no other starts, exit 0, the next start finishes', async () => {
        const url = await scratch();
        const { noteId } = await oldDatabaseWithData(url);
        // SQLite: also just after the copy, before the first migration (none is applied then).
        const points = kind === 'sqlite' ? ['snapshot', ORGANISE, LAST] : [ORGANISE, LAST];
        for (const point of points) {
          const before = await appliedMigrations(url);
          const proc = start(url, home, { TEST_PAUSE_AT: point });
          await paused(proc, point);
          proc.child.kill('SIGTERM');
          assert.equal((await exitWithin(proc, 30_000)).code, 0, proc.output());
          const applied = await appliedMigrations(url);
          if (point === 'snapshot') assert.deepEqual(applied, before, 'no migration after the signal');
          else {
            const name = point.slice('migration:'.length);
            assert.ok(applied.includes(name), `${name} committed`);
            // Only the migrations up to the one in progress: none started after the signal.
            assert.deepEqual(
              applied.filter((m) => !before.includes(m)).sort(),
              [...knownMigrations].sort().filter((m) => !before.includes(m) && m <= name),
            );
          }
        }
        const next = start(url, home);
        await assertReady(next, await next.port());
        await stop(next);
        await assertDataIntact(url, noteId);
      });

      test('two instances starting together on a new database: the second waits, both serve', async () => {
        const url = await scratch();
        const first = start(url, home, { TEST_PAUSE_AT: ORGANISE });
        const procs: Record<string, ServerProcess> = { first };
        await step('the first instance pausing inside a migration', procs, () => paused(first, ORGANISE));
        const second = start(url, home);
        procs.second = second;
        // The second finds the migration lock taken (SQLite: the write lock; PostgreSQL: the advisory
        // lock), says so and waits, not failed. Logged once it found the lock taken, before it blocks.
        await step('the second instance waiting for the migration lock', procs, () =>
          second.waitFor(
            (line) => (logEntry(line)?.msg?.includes('another process is migrating') ? true : undefined),
            60_000,
            'the second instance waiting',
          ),
        );
        first.child.kill('SIGUSR2');
        const [firstPort, secondPort] = await step('both instances listening', procs, () =>
          Promise.all([first.port(), second.port()]),
        );
        await step('the first instance ready', procs, () => assertReady(first, firstPort));
        await step('the second instance ready', procs, () => assertReady(second, secondPort));
        await step('both instances stopping with status 0', procs, () => Promise.all([stop(first), stop(second)]));
        assert.deepEqual(await appliedMigrations(url), [...knownMigrations].sort());
        // They took turns: the first committed the migration it was paused in, and between them each
        // migration was applied once.
        const byFirst = appliedBy(first);
        assert.ok(byFirst.includes(ORGANISE.slice('migration:'.length)), first.output());
        assert.deepEqual([...byFirst, ...appliedBy(second)].sort(), [...knownMigrations].sort());
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

      test('back-fills killed mid-run (kill -9) run again at the next start, not an interval later', async () => {
        const url = await scratch();
        const { noteId } = await oldDatabaseWithData(url);
        const summaryOf = (proc: ServerProcess, task: string) =>
          proc.lines.findIndex((line) => logEntry(line)?.msg?.startsWith(`maintenance ${task}: `) === true);
        // The search back-fill claimed (the claim says "ran now") and killed before it did anything.
        const first = start(url, home, { TEST_PAUSE_AT: 'maintenance:search-index:claimed' });
        await paused(first, 'maintenance:search-index:claimed');
        first.child.kill('SIGKILL');
        await first.exited;
        // The next start runs it again at once; then the tags back-fill is claimed and killed likewise.
        const second = start(url, home, { TEST_PAUSE_AT: 'maintenance:tags-backfill:claimed' });
        await step('the next start pausing in the tags back-fill', { second }, () =>
          paused(second, 'maintenance:tags-backfill:claimed'),
        );
        assert.match(
          second.lines[summaryOf(second, 'search-index')] ?? second.output(),
          /indexed 1 version the search index lacked/,
        );
        second.child.kill('SIGKILL');
        await second.exited;
        const third = start(url, home);
        await step('the tags derived', { third }, () =>
          third.waitFor(
            (line) => (logEntry(line)?.msg?.startsWith('maintenance audit-retention: ') ? true : undefined),
            60_000,
            'the start-up pass',
          ),
        );
        // In the start-up pass, before the tasks after it: not by the catch-up 15 s later.
        const tags = summaryOf(third, 'tags-backfill');
        assert.ok(tags !== -1 && tags < summaryOf(third, 'audit-retention'), third.output());
        assert.match(third.lines[tags]!, /derived the tags of 1 note written before tags existed/);
        await stop(third);
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
        for (const [i, port] of ports.entries()) await assertReady(both[i]!, port);
        await Promise.all(both.map(stop));
      });
    });
  }
});
