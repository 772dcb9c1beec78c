import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { BlackHoleProxy } from '../helpers/black-hole.js';
import { createScratchDatabase, databaseKinds, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { buildTestApp, newSession, testConfig, type Session } from '../helpers/harness.js';

if (databaseKinds.includes('postgres') && TEST_DATABASE_URL !== undefined) {
  describe('a silent PostgreSQL network [postgres]', () => {
    let scratch: ScratchDatabase;
    let proxy: BlackHoleProxy;
    let database: Database;
    let app: FastifyInstance;
    let session: Session;

    before(async () => {
      scratch = await createScratchDatabase('postgres');
      const direct = openDatabase(testConfig(scratch.url).database);
      await migrateToLatest(direct.db);
      await direct.close();
      const real = new URL(scratch.url);
      proxy = new BlackHoleProxy({ host: real.hostname, port: Number(real.port || 5432) });
      await proxy.start();
      const viaProxy = new URL(scratch.url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const config = testConfig(viaProxy.toString(), {
        DATABASE_QUERY_TIMEOUT_SECONDS: '1',
        DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
      });
      database = openDatabase(config.database);
      app = await buildTestApp(config, database);
      session = await newSession(app, 'silent');
    });
    after(async () => {
      await app?.close();
      await database?.close();
      await proxy?.stop();
      await scratch?.drop();
    });

    const listNotes = () => app.inject({ method: 'GET', url: '/api/notes', headers: session.auth });

    test('/readyz answers 503 within its budget while the network is silent, and requests fail 503', {
      timeout: 30_000,
    }, async () => {
      assert.equal((await listNotes()).statusCode, 200);
      proxy.blackHole(true);
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503, ready.body);
      assert.equal((ready.json() as { code: string }).code, 'database_unavailable');
      // Requests end (query or connect time-out), answered as an outage rather than hanging.
      const results = await Promise.all(Array.from({ length: 12 }, () => listNotes()));
      for (const res of results) assert.equal(res.statusCode, 503, res.body);
    });

    test('once the network is back, the stuck connections are replaced and everything is served', {
      timeout: 60_000,
    }, async () => {
      proxy.blackHole(false);
      // Until every stuck connection has been replaced some requests may still fail; then all pass.
      for (;;) {
        const results = await Promise.all(Array.from({ length: 12 }, () => listNotes()));
        if (results.every((res) => res.statusCode === 200)) break;
      }
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      assert.ok(database.poolStats!().total <= 10);
    });
  });
}
