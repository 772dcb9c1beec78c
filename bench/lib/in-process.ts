import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPasswordHasher } from '../../src/passwords/password-hasher.js';
import { scratchDatabase } from './scratch.js';

export const BENCH_USER = { username: 'bench', password: 'Vellum-bench: correct horse battery staple 42!' };

export interface InProcess {
  app: FastifyInstance;
  database: Database;
  ownerId: string;
  /** An access token of the bench user. */
  token: string;
  /** The machine's load average when it started, for the results. */
  load: string;
}

/**
 * The app factory on a scratch database with one signed-up, logged-in user (the in-process benches:
 * organise, WebDAV); `run` gets it and everything is closed and dropped afterwards.
 */
export async function withInProcessApp<T>(
  kind: 'sqlite' | 'postgres',
  label: string,
  run: (bench: InProcess) => Promise<T>,
): Promise<T> {
  const db = await scratchDatabase(kind, label);
  const config = loadConfig({
    DATABASE_URL: db.url,
    LOG_LEVEL: 'silent',
    RATE_LIMIT: 'off',
    PWNED_PASSWORDS_URL: 'off',
    JWT_SECRET: randomBytes(32).toString('hex'),
    CSRF_SECRET: randomBytes(32).toString('hex'),
  });
  const database = openDatabase(config.database);
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  try {
    await migrateToLatest(database.db);
    const app = await buildApp({ config, database, logger: false, hasher: createPasswordHasher() });
    try {
      const ownerId = (
        (await app.inject({ method: 'POST', url: '/api/auth/signup', payload: BENCH_USER })).json() as { id: string }
      ).id;
      const token = (
        (await app.inject({ method: 'POST', url: '/api/auth/login', payload: BENCH_USER })).json() as {
          access_token: string;
        }
      ).access_token;
      return await run({ app, database, ownerId, token, load });
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
    await db.drop();
  }
}

/** Prints the result and, unless told not to, keeps it as bench/results/<name>-<db>-<date>.json. */
export function keepResult(
  name: string,
  result: { db: string; date: string; [key: string]: unknown },
  write: boolean,
  log: (message: string) => void,
): void {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (!write) return;
  const file = path.join('bench', 'results', `${name}-${result.db}-${result.date.slice(0, 10)}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${file}`);
}
