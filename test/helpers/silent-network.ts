import type { Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { BlackHoleProxy, targetOf, throughProxy } from './black-hole.js';
import { createScratchDatabase } from './databases.js';
import { testConfig } from './harness.js';

/**
 * Settings for two instances on one database where instance B reaches PostgreSQL (`postgres`) or
 * Redis (`redis`, the database then SQLite) through a proxy the test can silence. `env` goes to
 * both; B's PostgreSQL time-outs are short, so that the silence is noticed.
 */
export interface SilentNetwork {
  configA: Config;
  configB: Config;
  /** A's database, migrated. */
  database: Database;
  proxy: BlackHoleProxy;
  close(): Promise<void>;
}

export async function silentNetwork(
  through: 'postgres' | { redisUrl: string },
  env: Record<string, string> = {},
): Promise<SilentNetwork> {
  const scratch = await createScratchDatabase(through === 'postgres' ? 'postgres' : 'sqlite');
  let configA = testConfig(scratch.url, env);
  let configB: Config;
  let proxy: BlackHoleProxy;
  if (through === 'postgres') {
    proxy = new BlackHoleProxy(targetOf(scratch.url));
    await proxy.start();
    configB = testConfig(throughProxy(scratch.url, proxy), {
      ...env,
      DATABASE_QUERY_TIMEOUT_SECONDS: '1',
      DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
    });
  } else {
    const { redisUrl } = through;
    const redisKeyPrefix = `test-gap-${process.pid}-${Date.now()}:`;
    proxy = new BlackHoleProxy(targetOf(redisUrl));
    await proxy.start();
    configA = { ...configA, redisUrl, redisKeyPrefix };
    configB = { ...testConfig(scratch.url, env), redisUrl: throughProxy(redisUrl, proxy), redisKeyPrefix };
  }
  const database = openDatabase(configA.database);
  await migrateToLatest(database.db);
  return {
    configA,
    configB,
    database,
    proxy,
    close: async () => {
      await database.close();
      await proxy.stop();
      await scratch.drop();
    },
  };
}
