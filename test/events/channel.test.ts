import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { databaseChannel } from '../../src/db/notifications.js';
import { databaseKinds, TEST_DATABASE_URL } from '../helpers/databases.js';
import { testConfig } from '../helpers/harness.js';

/** The channel live events travel on between instances (db/notifications.ts). */
const quiet = { warn: () => undefined } as unknown as FastifyBaseLogger;

for (const kind of databaseKinds) {
  describe(`notification channel [${kind}]`, () => {
    test('messages published at once all arrive, in order, each once; one query at a time on the publishing connection', async () => {
      const url = kind === 'postgres' ? TEST_DATABASE_URL! : 'sqlite::memory:';
      const channel = databaseChannel(testConfig(url).database, `vellum_test_${process.pid}`, quiet);
      const heard: string[] = [];
      let wake = () => {};
      channel.subscribe((payload) => { heard.push(payload); wake(); });
      const until = (check: () => boolean) => new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out; heard ${heard.length}`)), 10_000);
        wake = () => { if (check()) { clearTimeout(timer); resolve(); } };
        wake();
      });
      // A first message says the listening connection is up.
      await channel.publish('ready');
      await until(() => heard.includes('ready'));

      // pg queues a query sent while another runs, but that is deprecated (an error in pg 9).
      const query = pg.Client.prototype.query;
      let running = 0;
      let most = 0;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        running += 1;
        most = Math.max(most, running);
        const result = (query as (...a: unknown[]) => unknown).apply(this, args);
        void Promise.resolve(result).finally(() => { running -= 1; }).catch(() => undefined);
        return result;
      } as typeof query;
      try {
        const sent = Array.from({ length: 50 }, (_, i) => `m${i}`);
        await Promise.all(sent.map((message) => channel.publish(message)));
        await until(() => heard.length === sent.length + 1);
        assert.deepEqual(heard, ['ready', ...sent]);
        if (kind === 'postgres') assert.equal(most, 1);
      } finally {
        pg.Client.prototype.query = query;
        await channel.close();
      }
    });
  });
}
