import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import type { BlackHoleProxy } from '../helpers/black-hole.js';
import { TEST_DATABASE_URL } from '../helpers/databases.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { pauseAt } from '../helpers/pause.js';
import { silentNetwork } from '../helpers/silent-network.js';
import { until } from '../helpers/until.js';
import { buildTestApp, newSession, type Session } from '../helpers/harness.js';

/**
 * Live events between two instances when the network between one of them and the channel
 * (PostgreSQL's LISTEN, or Redis) goes silent (issue #43, finding 6): the listener notices, listens
 * again once the network is back, and its streams are told `resync` — the changes made meanwhile
 * were never heard — and then hear the changes made after.
 *
 * B's listener notices a silence by a ping not answered in time, and a loaded machine can be slow
 * enough to fail a ping (or a first connection) on a healthy network too: the listener then rightly
 * listens again and says `resync`, which is not the one this test is about. So B's pings are held
 * at 'events:ping' and only the one that meets the silence is let go, and whatever B's streams
 * heard before B was seen listening (a resync for a first connection that failed) is set aside.
 */
interface Setup {
  /** Instance A reaches the channel directly; instance B through the proxy. */
  a: FastifyInstance;
  b: FastifyInstance;
  proxy: BlackHoleProxy;
  /** Where B's listener pings; armed at 'events:ping' before B starts. */
  pings: ReturnType<typeof pauseAt>;
  /** B's first ping, held. */
  firstPing: { reached: Promise<void>; release(): void };
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
      // B's listener starts with it, unawaited: an event it passes on proves it listens. A's
      // publisher connects unawaited too, and refuses a message until it has (Redis): a refused
      // probe is one not heard.
      for (let i = 0; ; i++) {
        await s.a.liveEvents
          .publish({ type: 'note.updated', data: { id: `probe${i}` }, users: [user.userId] })
          .catch(() => undefined);
        if (
          await stream.next('note.updated', `probe${i}`, 250).then(
            () => true,
            () => false,
          )
        )
          break;
        assert.ok(i < 40, 'instance B never heard the channel');
      }
      // A resync for a first connection that failed came before the probe (in turn with events).
      stream.events.splice(0);
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
      // Noticed by the listener's ping (nothing closes on a silent network), then listening again;
      // the pings of the new connection are held in turn, so none fails while "After" travels.
      await s.firstPing.reached;
      s.firstPing.release();
      s.pings.arm('events:ping');
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
  // B's periodic re-check of its streams (a query on that pool) is put off, so the only bytes
  // B is sent unasked during the silence are the notification.
  const databaseB = openDatabase(configB.database);
  const a = await buildTestApp(configA, database);
  const pings = pauseAt();
  const firstPing = pings.arm('events:ping');
  const b = await buildTestApp(configB, databaseB, {
    busTesting: { pingEveryMs: 500, pingTimeoutMs: 500 },
    liveTesting: { recheckMs: 600_000 },
    checkpoint: pings.checkpoint,
  });
  return {
    a,
    b,
    pings,
    firstPing,
    close: async () => {
      await a.close();
      await b.close();
      await databaseB.close();
    },
    proxy,
  };
}

if (TEST_DATABASE_URL !== undefined) {
  gapTests('live events across a silent network to PostgreSQL [postgres]', async () => {
    const network = await silentNetwork('postgres');
    const pair = await twoInstances(network.configA, network.configB, network.database, network.proxy);
    return {
      ...pair,
      close: async () => {
        await pair.close();
        await network.close();
      },
    };
  });
}

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;
if (redisUrl !== undefined) {
  gapTests('live events across a silent network to Redis [sqlite + Redis]', async () => {
    const network = await silentNetwork({ redisUrl });
    const pair = await twoInstances(network.configA, network.configB, network.database, network.proxy);
    return {
      ...pair,
      close: async () => {
        await pair.close();
        await network.close();
      },
    };
  });
}
