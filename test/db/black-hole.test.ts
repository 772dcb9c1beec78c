import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { BlackHoleProxy } from '../helpers/black-hole.js';
import { createScratchDatabase, databaseKinds, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { entryArgs } from '../helpers/entry.js';
import {
  buildTestApp,
  CSRF_SECRET,
  JWT_SECRET,
  newSession,
  TEST_ENV,
  testConfig,
  type Session,
} from '../helpers/harness.js';
import { exitWithin, logEntry, startProcess, type ServerProcess } from '../helpers/server-process.js';

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

  /**
   * SIGTERM while the network to PostgreSQL is silent: the drain and the close end on their own
   * (the pool's and the listener's time-outs), and the process exits 0. It used to take 15 s and
   * exit 1 (issue #43, finding 6).
   */
  describe('SIGTERM while the PostgreSQL network is silent [postgres]', () => {
    let scratch: ScratchDatabase;
    let proxy: BlackHoleProxy;
    let proc: ServerProcess | undefined;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-silent-stop-'));

    before(async () => {
      scratch = await createScratchDatabase('postgres', { migrated: true });
      const direct = openDatabase(testConfig(scratch.url).database);
      await migrateToLatest(direct.db);
      await direct.close();
      const real = new URL(scratch.url);
      proxy = new BlackHoleProxy({ host: real.hostname, port: Number(real.port || 5432) });
      await proxy.start();
    });
    after(async () => {
      await proc?.kill();
      await proxy?.stop();
      await scratch?.drop();
      fs.rmSync(home, { recursive: true, force: true });
    });

    const start = (env: Record<string, string> = {}): ServerProcess => {
      const viaProxy = new URL(scratch.url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      return startProcess(process.execPath, entryArgs('main'), {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: {
          ...TEST_ENV,
          HOME: home,
          PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: viaProxy.toString(),
          DATABASE_QUERY_TIMEOUT_SECONDS: '1',
          DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
          SHUTDOWN_DRAIN_SECONDS: '1',
          JWT_SECRET,
          CSRF_SECRET,
          PWNED_PASSWORDS_URL: 'off',
          RATE_LIMIT: 'off',
          LOG_LEVEL: 'info',
          ...env,
        },
      });
    };

    test('the drain and the close end by themselves and the process exits 0', { timeout: 60_000 }, async () => {
      proc = start();
      const port = await proc.port();
      const base = `http://127.0.0.1:${port}`;
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      // The start-up maintenance pass is done first (the next test has one caught by the silence).
      await proc.waitFor(
        (line) => (logEntry(line)?.msg?.startsWith('maintenance dav-properties') ? true : undefined),
        30_000,
        'the start-up maintenance pass',
      );
      // Connections in the pool and the LISTEN connection are up; then the network goes silent,
      // with requests waiting on it.
      proxy.blackHole(true);
      const waiting = Array.from({ length: 4 }, () =>
        fetch(`${base}/readyz`).then(
          (res) => res.status,
          () => 0,
        ),
      );
      proc.child.kill('SIGTERM');
      const { code } = await exitWithin(proc, 45_000);
      assert.equal(code, 0, proc.output());
      for (const status of await Promise.all(waiting)) assert.ok([0, 503].includes(status), String(status));
    });

    // Housekeeping's statements run without the reply time-out (a VACUUM may rightly take long): one
    // the silence caught held the shutdown past its deadline, and the process exited 1 (1 run in 3).
    test('a housekeeping statement the silence caught is abandoned after the drain: exit 0', {
      timeout: 60_000,
    }, async () => {
      await proc?.kill();
      proxy.blackHole(false);
      proc = start({ TEST_PAUSE_AT: 'maintenance:trash-purge:unbounded' });
      await proc.waitFor(
        (line) => (logEntry(line)?.msg === 'paused at maintenance:trash-purge:unbounded' ? true : undefined),
        30_000,
        'the pause with the statement time-out off',
      );
      // SIGTERM also ends the pause: the task's next statement goes into the silence, and waits.
      proxy.blackHole(true);
      proc.child.kill('SIGTERM');
      const { code } = await exitWithin(proc, 45_000);
      assert.equal(code, 0, proc.output());
      assert.ok(
        proc.output().includes('housekeeping still running at shutdown: abandoned'),
        `the statement was abandoned, not answered: ${proc.output()}`,
      );
    });
  });
}
