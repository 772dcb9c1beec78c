import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { BlackHoleProxy, targetOf, throughProxy } from '../helpers/black-hole.js';
import { createScratchDatabase, TEST_DATABASE_URL, type ScratchDatabase } from '../helpers/databases.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { until } from '../helpers/until.js';
import { buildTestApp, newSession, testConfig, type Session } from '../helpers/harness.js';

/**
 * Live events between two instances when the network between one of them and the channel
 * (PostgreSQL's LISTEN, or Redis) goes silent (issue #43, finding 6): the listener notices, listens
 * again once the network is back, and its streams are told `resync` — the changes made meanwhile
 * were never heard — and then hear the changes made after.
 */
interface Setup {
  /** Instance A reaches the channel directly; instance B through the proxy. */
  a: FastifyInstance;
  b: FastifyInstance;
  proxy: BlackHoleProxy;
  close(): Promise<void>;
}

function gapTests(name: string, setup: () => Promise<Setup>) {
  describe(name, () => {
    let s: Setup;
    let user: Session;
    let stream: Stream;
    before(async () => {
      s = await setup();
      await listen(s.a);
      const url = await listen(s.b);
      user = await newSession(s.a, 'gap');
      stream = await Stream.open(url, user.accessToken);
      // B's listener starts with it, unawaited: an event it passes on proves it listens.
      for (let i = 0; ; i++) {
        await s.a.liveEvents.publish({ type: 'note.updated', data: { id: `probe${i}` }, users: [user.userId] });
        if (
          await stream.next('note.updated', `probe${i}`, 250).then(
            () => true,
            () => false,
          )
        )
          break;
        assert.ok(i < 40, 'instance B never heard the channel');
      }
    });
    after(async () => {
      stream?.close();
      await s?.close();
    });

    const create = async (title: string) =>
      (await s.a.inject({ method: 'POST', url: '/api/notes', headers: user.auth, payload: { title } })).json()
        .id as string;

    test('a change made while B cannot hear is missed; once the network is back B says resync, then changes arrive again', {
      timeout: 60_000,
    }, async () => {
      assert.deepEqual(
        stream.events.filter((e) => e.type === 'resync'),
        [],
      );
      s.proxy.blackHole(true);
      const missed = await create('While silent');
      // Published after its commit, unawaited: silence until the proxy swallowed the notification
      // (nothing else comes from the target unasked).
      await until(() => s.proxy.droppedFromTarget > 0, 'the change to be lost on the way to B');
      s.proxy.blackHole(false);
      // Noticed by the listener's ping (nothing closes on a silent network), then listening again.
      await stream.until(() => stream.events.some((e) => e.type === 'resync'), 30_000);
      const resync = stream.events.find((e) => e.type === 'resync')!;
      assert.deepEqual(resync.data, { reason: 'events_missed' });
      assert.equal(
        stream.events.some((e) => e.data.id === missed),
        false,
        'the change made during the silence was never heard (that is why resync is said)',
      );
      const later = await create('After');
      await stream.next('note.created', later, 10_000);
      assert.equal(stream.ended, false);
    });
  });
}

async function twoInstances(configA: Config, configB: Config, database: Database, proxy: BlackHoleProxy) {
  // Each instance its own database handle: B's pool goes through the proxy as its listener does.
  const databaseB = openDatabase(configB.database);
  const a = await buildTestApp(configA, database);
  const b = await buildTestApp(configB, databaseB, { busTesting: { pingEveryMs: 500, pingTimeoutMs: 500 } });
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      await databaseB.close();
    },
    proxy,
  };
}

if (TEST_DATABASE_URL !== undefined) {
  let scratch: ScratchDatabase;
  let database: Database;
  let proxy: BlackHoleProxy;
  gapTests('live events across a silent network to PostgreSQL [postgres]', async () => {
    scratch = await createScratchDatabase('postgres');
    const configA = testConfig(scratch.url);
    database = openDatabase(configA.database);
    await migrateToLatest(database.db);
    proxy = new BlackHoleProxy(targetOf(scratch.url));
    await proxy.start();
    const configB = testConfig(throughProxy(scratch.url, proxy), {
      DATABASE_QUERY_TIMEOUT_SECONDS: '1',
      DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
    });
    const pair = await twoInstances(configA, configB, database, proxy);
    return {
      ...pair,
      close: async () => {
        await pair.close();
        await database.close();
        await proxy.stop();
        await scratch.drop();
      },
    };
  });
}

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;
if (redisUrl !== undefined) {
  let scratch: ScratchDatabase;
  let database: Database;
  let proxy: BlackHoleProxy;
  gapTests('live events across a silent network to Redis [sqlite + Redis]', async () => {
    scratch = await createScratchDatabase('sqlite');
    const prefix = `test-gap-${process.pid}-${Date.now()}:`;
    const configA = { ...testConfig(scratch.url), redisUrl, redisKeyPrefix: prefix };
    database = openDatabase(configA.database);
    await migrateToLatest(database.db);
    proxy = new BlackHoleProxy(targetOf(redisUrl));
    await proxy.start();
    const configB = { ...testConfig(scratch.url), redisUrl: throughProxy(redisUrl, proxy), redisKeyPrefix: prefix };
    const pair = await twoInstances(configA, configB, database, proxy);
    return {
      ...pair,
      close: async () => {
        await pair.close();
        await database.close();
        await proxy.stop();
        await scratch.drop();
      },
    };
  });
}
