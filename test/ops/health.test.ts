import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createMigrator, latestMigration, migrateToLatest } from '../../src/db/migrate.js';
import { createScratchDatabase, databaseKinds, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { buildTestApp, forEachDatabase, newSession, testConfig, type Session } from '../helpers/harness.js';

const FIRST_MIGRATION = '2026-11-22-01-accounts';

function assertUnavailable(res: LightMyRequestResponse, detail: string, code: string): void {
  assert.equal(res.statusCode, 503, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.headers['retry-after'], '5');
  assert.deepEqual(res.json(), { type: 'about:blank', title: 'Service Unavailable', status: 503, detail, code });
}

forEachDatabase('health', (ctx) => {
  test('GET /healthz answers 200 {status: "ok"}', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), { status: 'ok' });
  });

  test('GET /readyz answers 200 with the latest migration', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const applied = (await ctx.database.db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute()) as Array<{ name: string }>;
    assert.deepEqual(res.json(), {
      status: 'ready',
      migration: applied
        .map((m) => m.name)
        .sort()
        .at(-1),
    });
    assert.equal(res.json().migration, latestMigration);
  });

  test("a database that also holds a newer build's migration (a rolling upgrade): still ready", async () => {
    const newer = '2999-01-01-00-from-a-newer-build';
    await sql`insert into kysely_migration (name, timestamp) values (${newer}, ${new Date().toISOString()})`.execute(
      ctx.database.db,
    );
    try {
      const res = await ctx.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 'ready', migration: latestMigration });
    } finally {
      await sql`delete from kysely_migration where name = ${newer}`.execute(ctx.database.db);
    }
  });
});

for (const kind of databaseKinds) {
  describe(`readiness of an unmigrated database [${kind}]`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let app: FastifyInstance;
    before(async () => {
      scratch = await createScratchDatabase(kind);
      database = openDatabase(testConfig(scratch.url).database);
      app = await buildTestApp(testConfig(scratch.url), database);
    });
    after(async () => {
      await app?.close();
      await database?.close();
      await scratch?.drop();
    });

    test('a database that was never migrated: /readyz 503, /healthz still 200', async () => {
      assertUnavailable(
        await app.inject({ method: 'GET', url: '/readyz' }),
        'Database migrations are not applied',
        'not_migrated',
      );
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    });

    test('a partly migrated database: /readyz 503', async () => {
      const { error } = await createMigrator(database.db).migrateTo(FIRST_MIGRATION);
      assert.equal(error, undefined);
      assertUnavailable(
        await app.inject({ method: 'GET', url: '/readyz' }),
        'Database migrations are not applied',
        'not_migrated',
      );
    });

    test('once migrated, the same app is ready without a restart', async () => {
      await migrateToLatest(database.db);
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 'ready', migration: latestMigration });
    });
  });
}

/** A TCP proxy that can be stopped (every live connection cut) and started again on the same port. */
class StoppableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private cut: (() => void) | undefined;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => {
        const cut = this.cut;
        if (cut === undefined) upstream.write(chunk);
        else {
          // The query never reaches the server: the connection dies under it.
          this.cut = undefined;
          void this.stop().then(cut);
        }
      });
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Stops the proxy when a client next sends anything (a query, mid-request); resolves once stopped. */
  stopOnNextData(): Promise<void> {
    return new Promise((resolve) => {
      this.cut = resolve;
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }
}

// A database outage needs a server that can go away; SQLite is a file in the process.
if (databaseKinds.includes('postgres') && TEST_DATABASE_URL !== undefined) {
  describe('database outage [postgres]', () => {
    let scratch: ScratchDatabase;
    let proxy: StoppableProxy;
    let database: Database;
    let app: FastifyInstance;
    let session: Session;

    const listNotes = () => app.inject({ method: 'GET', url: '/api/notes', headers: session.auth });

    before(async () => {
      scratch = await createScratchDatabase('postgres');
      const direct = openDatabase(testConfig(scratch.url).database);
      await migrateToLatest(direct.db);
      await direct.close();
      const real = new URL(scratch.url);
      proxy = new StoppableProxy({ host: real.hostname, port: Number(real.port || 5432) });
      await proxy.start();
      const viaProxy = new URL(scratch.url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const config = testConfig(viaProxy.toString());
      database = openDatabase(config.database);
      app = await buildTestApp(config, database);
    });
    after(async () => {
      await app?.close();
      await database?.close();
      await proxy?.stop();
      await scratch?.drop();
    });

    test('before the outage: ready, and notes are served', async () => {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      session = await newSession(app, 'outage');
      const created = await app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: session.auth,
        payload: { title: 'kept' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const list = await listNotes();
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual(
        (list.json() as Array<{ title: string }>).map((n) => n.title),
        ['kept'],
      );
    });

    test('the connection dies in the middle of a request: 503 problem+json, no crash', async () => {
      const stopped = proxy.stopOnNextData();
      const res = await listNotes();
      await stopped;
      assertUnavailable(res, 'Service temporarily unavailable', 'database_unavailable');
    });

    test('during the outage: /readyz and notes answer 503 problem+json, never 500', async () => {
      await proxy.stop();
      assertUnavailable(
        await app.inject({ method: 'GET', url: '/readyz' }),
        'Database unavailable',
        'database_unavailable',
      );
      // Twice: the first may meet a pooled connection that died, the second a refused new one.
      for (let i = 0; i < 2; i++) {
        assertUnavailable(await listNotes(), 'Service temporarily unavailable', 'database_unavailable');
      }
      // The process stays up and still answers what needs no database.
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    });

    test('after the outage: the app recovers by itself', async () => {
      await proxy.start();
      // No waiting: the pool opens a new connection for the next query, and that one gets through.
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      const list = await listNotes();
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual(
        (list.json() as Array<{ title: string }>).map((n) => n.title),
        ['kept'],
      );
    });
  });
}
