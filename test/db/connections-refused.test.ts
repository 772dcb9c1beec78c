import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { isDatabaseUnavailable } from '../../src/db/availability.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createScratchDatabase, databaseKinds, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { newSession, NO_WEB_CLIENT, testConfig, type Session } from '../helpers/harness.js';
import { captureLogs, type CapturedLogs } from '../helpers/logs.js';

function assertUnavailable(res: LightMyRequestResponse, detail: string): void {
  assert.equal(res.statusCode, 503, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.headers['retry-after'], '5');
  assert.deepEqual(res.json(), {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail,
    code: 'database_unavailable',
  });
}

describe('"cannot connect now" errors are outages, not bugs', () => {
  test('every such SQLSTATE and socket error is recognised; request errors are not', () => {
    for (const code of [
      '55000',
      '57P01',
      '57P02',
      '57P03',
      '57P04',
      '53300',
      '08000',
      '08001',
      '08003',
      '08004',
      '08006',
      'ECONNREFUSED',
      'SQLITE_BUSY',
    ]) {
      assert.equal(isDatabaseUnavailable({ code, message: 'x' }), true, code);
    }
    for (const code of ['23505', '42P01', '22P02', '40001', 'SQLITE_CONSTRAINT']) {
      assert.equal(isDatabaseUnavailable({ code, message: 'x' }), false, code);
    }
  });
});

// Refusing connections is a server's state; SQLite is a file in the process.
if (databaseKinds.includes('postgres') && TEST_DATABASE_URL !== undefined) {
  describe('PostgreSQL refuses connections (ALTER DATABASE … ALLOW_CONNECTIONS false) [postgres]', () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let app: FastifyInstance;
    let logs: CapturedLogs;
    let session: Session;
    const name = () => new URL(scratch.url).pathname.slice(1);
    const admin = async (statement: string) => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
    };

    before(async () => {
      scratch = await createScratchDatabase('postgres');
      const config = testConfig(scratch.url);
      database = openDatabase(config.database, { onPoolError: () => {} });
      await migrateToLatest(database.db);
      logs = captureLogs('error');
      app = await buildApp({ config, database, logger: logs.logger, webRoot: NO_WEB_CLIENT });
      await app.ready();
      session = await newSession(app, 'refused');
    });
    after(async () => {
      await app?.close();
      await database?.close();
      await admin(`ALTER DATABASE ${name()} ALLOW_CONNECTIONS true`).catch(() => {});
      await scratch?.drop();
    });

    test('requests and /readyz answer 503 with Retry-After (SQLSTATE 55000), then recover', async () => {
      await admin(`ALTER DATABASE ${name()} ALLOW_CONNECTIONS false`);
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name()}'`);
      const list = () => app.inject({ method: 'GET', url: '/api/notes', headers: session.auth });
      // The first may meet a pooled connection that was terminated (57P01); later ones need a new one.
      for (let i = 0; i < 3; i++) assertUnavailable(await list(), 'Service temporarily unavailable');
      assertUnavailable(await app.inject({ method: 'GET', url: '/readyz' }), 'Database unavailable');
      const refused = logs.lines
        .map((l) => JSON.parse(l) as { msg: string; err?: { code?: string } })
        .filter((e) => e.msg === 'database unavailable' && e.err?.code === '55000');
      assert.ok(refused.length >= 1, logs.lines.join('\n'));

      await admin(`ALTER DATABASE ${name()} ALLOW_CONNECTIONS true`);
      const again = await list();
      assert.equal(again.statusCode, 200, again.body);
    });
  });
}
