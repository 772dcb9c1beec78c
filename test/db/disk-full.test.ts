import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { newSession, testConfig, type Session } from '../helpers/harness.js';
import { captureLogs, type CapturedLogs } from '../helpers/logs.js';

/**
 * A full disk, injected: SQLite is held to the pages it has (max_page_count: the engine answers
 * SQLITE_FULL exactly as for a full disk); PostgreSQL gets a trigger raising disk_full (53100), what
 * it answers when it cannot extend a file.
 */
async function fillDisk(kind: string, database: Database): Promise<void> {
  if (kind === 'sqlite') {
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(database.db);
    await sql.raw(`pragma max_page_count = ${Number(rows[0]!.page_count)}`).execute(database.db);
    return;
  }
  await sql`create function full_disk() returns trigger language plpgsql as $$ begin raise exception 'could not extend file: No space left on device' using errcode = '53100'; end $$`.execute(
    database.db,
  );
  await sql`create trigger full_disk before insert on note_versions for each row execute function full_disk()`.execute(
    database.db,
  );
}

async function freeDisk(kind: string, database: Database): Promise<void> {
  if (kind === 'sqlite') {
    await sql.raw('pragma max_page_count = 1073741823').execute(database.db);
    return;
  }
  await sql`drop trigger full_disk on note_versions`.execute(database.db);
  await sql`drop function full_disk()`.execute(database.db);
}

for (const kind of databaseKinds) {
  describe(`a full disk [${kind}]`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let app: FastifyInstance;
    let logs: CapturedLogs;
    let session: Session;

    before(async () => {
      scratch = await createScratchDatabase(kind);
      const config = testConfig(scratch.url);
      database = openDatabase(config.database);
      await migrateToLatest(database.db);
      logs = captureLogs('info');
      app = await buildApp({ config, database, logger: logs.logger });
      await app.ready();
      session = await newSession(app, 'full');
    });
    after(async () => {
      await app?.close();
      await database?.close();
      await scratch?.drop();
    });

    const scrape = async () => {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200, res.body);
      return res.body;
    };

    const write = () =>
      app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: session.auth,
        payload: { title: 'big', content: 'x'.repeat(200_000) },
      });

    test('writes answer 507 with a readable problem, /readyz 503 until a write succeeds', async () => {
      await fillDisk(kind, database);
      try {
        const res = await write();
        assert.equal(res.statusCode, 507, res.body);
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
        const body = res.json() as { code: string; detail: string; status: number };
        assert.equal(body.code, 'storage_full');
        assert.equal(body.status, 507);
        assert.match(body.detail, /storage is full/i);
        const ready = await app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 503, ready.body);
        assert.equal((ready.json() as { code: string }).code, 'storage_full');
        // Reads still work.
        assert.equal((await app.inject({ method: 'GET', url: '/api/notes', headers: session.auth })).statusCode, 200);
        // And a scrape says so: full now, and one write failed for it.
        const metrics = await scrape();
        assert.match(metrics, /^vellum_storage_full 1$/m);
        assert.match(metrics, /^vellum_database_errors_total\{cause="storage_full"\} 1$/m);
      } finally {
        await freeDisk(kind, database);
      }
      // Still 503 until a write shows the space is back…
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
      assert.equal((await write()).statusCode, 201);
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      assert.match(await scrape(), /^vellum_storage_full 0$/m);
    });

    test('the log says the disk is full, not "cannot rollback"', () => {
      const text = logs.lines.join('\n');
      assert.doesNotMatch(text, /cannot rollback/);
      assert.match(text, kind === 'sqlite' ? /database or disk is full/ : /No space left on device/);
    });
  });
}
