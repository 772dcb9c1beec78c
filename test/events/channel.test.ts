import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { databaseChannel, NOTIFY_MAX_BYTES } from '../../src/db/notifications.js';
import { databaseKinds, TEST_DATABASE_URL } from '../helpers/databases.js';
import { testConfig } from '../helpers/harness.js';

/** The channel live events travel on between instances (db/notifications.ts). */
const quiet = { warn: () => undefined } as unknown as FastifyBaseLogger;

for (const kind of databaseKinds) {
  describe(`notification channel [${kind}]`, () => {
    test('messages published at once all arrive, in order, each once; one query at a time on the publishing connection; a refused one holds up none', async () => {
      const url = kind === 'postgres' ? TEST_DATABASE_URL! : 'sqlite::memory:';
      const channel = databaseChannel(testConfig(url).database, `vellum_test_${process.pid}`, quiet);
      const heard: string[] = [];
      let wake = () => {};
      channel.subscribe((payload) => {
        heard.push(payload);
        wake();
      });
      const until = (check: () => boolean, ms = 10_000) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out; heard ${heard.length}`)), ms);
          wake = () => {
            if (check()) {
              clearTimeout(timer);
              resolve();
            }
          };
          wake();
        });
      const query = pg.Client.prototype.query;
      try {
        // The listening connection starts beside the first publish: a message sent before its
        // LISTEN is not heard, so "ready" is sent until one is (each its own, so a late one is told apart).
        for (let i = 0; !heard.some((m) => m.startsWith('ready')); i++) {
          assert.ok(i < 100, 'the channel never heard its own message');
          await channel.publish(`ready${i}`);
          await until(() => heard.includes(`ready${i}`), 250).catch(() => undefined);
        }

        // pg queues a query sent while another runs, but that is deprecated (an error in pg 9).
        let running = 0;
        let most = 0;
        pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
          running += 1;
          most = Math.max(most, running);
          const result = (query as (...a: unknown[]) => unknown).apply(this, args);
          void Promise.resolve(result)
            .finally(() => {
              running -= 1;
            })
            .catch(() => undefined);
          return result;
        } as typeof query;
        const sent = Array.from({ length: 50 }, (_, i) => `m${i}`);
        const messages = () => heard.filter((m) => !m.startsWith('ready'));
        await Promise.all(sent.map((message) => channel.publish(message)));
        await until(() => messages().length === sent.length);
        assert.deepEqual(messages(), sent);
        if (kind === 'postgres') assert.equal(most, 1);

        if (kind === 'postgres') {
          // PostgreSQL refuses a payload over its limit: that message fails, the next one goes.
          const [tooBig, after] = await Promise.allSettled([
            channel.publish('x'.repeat(NOTIFY_MAX_BYTES + 1)),
            channel.publish('after'),
          ]);
          assert.equal(tooBig.status, 'rejected');
          assert.equal(after.status, 'fulfilled');
          await until(() => heard.includes('after'));
          assert.deepEqual(messages(), [...sent, 'after']);
        }
      } finally {
        pg.Client.prototype.query = query;
        await channel.close();
      }
      if (kind === 'postgres') await assert.rejects(channel.publish('late'), /closed/);
    });
  });
}
