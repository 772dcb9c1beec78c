import path from 'node:path';
import os from 'node:os';
import { after, before, describe } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.js';
import { createPasswordHasher, type PasswordHasher } from '../../src/passwords/password-hasher.js';
import { loadConfig, type Argon2Cost, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createScratchDatabase, databaseKinds, type DatabaseKind, type ScratchDatabase } from './databases.js';

export const JWT_SECRET = 'test-jwt-secret-0123456789abcdefghijklmnop';
export const CSRF_SECRET = 'test-csrf-secret-0123456789abcdefghijklmno';
/** Passes every password rule with the default settings. */
export const GOOD_PASSWORD = 'violet-Harbor-lantern-42-quietly';

export interface TestContext {
  kind: DatabaseKind;
  app: FastifyInstance;
  config: Config;
  database: Database;
  /** Rebuilds the app on the same database with other settings (closes the previous app). */
  rebuild(env?: Record<string, string>): Promise<FastifyInstance>;
}

/**
 * Runs `suite` once per database kind, each on its own fresh database. `ctx` is filled in by a
 * before() hook, so read its fields inside tests, not at suite definition time.
 */
export function forEachDatabase(
  name: string,
  suite: (ctx: TestContext) => void,
  env: Record<string, string> = {},
): void {
  for (const kind of databaseKinds) {
    describe(`${name} [${kind}]`, () => {
      const ctx = { kind } as TestContext;
      let scratch: ScratchDatabase;
      before(async () => {
        scratch = await createScratchDatabase(kind, { migrated: true });
        ctx.config = testConfig(scratch.url, env);
        ctx.database = openDatabase(ctx.config.database);
        await migrateToLatest(ctx.database.db);
        ctx.app = await buildTestApp(ctx.config, ctx.database);
        ctx.rebuild = async (overrides = {}) => {
          await ctx.app.close();
          ctx.config = testConfig(scratch.url, { ...env, ...overrides });
          ctx.app = await buildTestApp(ctx.config, ctx.database);
          return ctx.app;
        };
      });
      after(async () => {
        await ctx.app?.close();
        await ctx.database?.close();
        await scratch?.drop();
      });
      suite(ctx);
    });
  }
}

/**
 * What every test process runs with: NODE_ENV=test and the cheap test-only Argon2 cost (production
 * cost is ~40 ms a hash, and the suite hashes hundreds of times). Spawned servers and CLIs get it too.
 */
export const TEST_ENV = { NODE_ENV: 'test', TEST_ARGON2: 'cheap' } as const;

export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  // A test that sets another NODE_ENV (production) gets the production hash cost with it.
  const base = env.NODE_ENV === undefined || env.NODE_ENV === TEST_ENV.NODE_ENV ? TEST_ENV : {};
  return loadConfig({
    ...base,
    DATABASE_URL: databaseUrl,
    JWT_SECRET,
    CSRF_SECRET,
    PWNED_PASSWORDS_URL: 'off',
    RATE_LIMIT: 'off',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

/** One hasher per cost, shared by every app of the process (as one server shares its own). */
const hashers = new Map<Argon2Cost, PasswordHasher>();
export function testHasher(cost: Argon2Cost = 'test-cheap'): PasswordHasher {
  let hasher = hashers.get(cost);
  if (hasher === undefined) hashers.set(cost, (hasher = createPasswordHasher({ cost })));
  return hasher;
}

export const NO_WEB_CLIENT = path.join(os.tmpdir(), 'vellum-test-no-web-client');

export async function buildTestApp(
  config: Config,
  database: Database,
  extra: Pick<
    AppOptions,
    'liveTesting' | 'accountStatusTesting' | 'busTesting' | 'collabTesting' | 'checkpoint' | 'throttleTesting'
  > = {},
): Promise<FastifyInstance> {
  // No web client: API tests see the same unknown-path 404s whether or not `npm run build` has run.
  const app = await buildApp({
    config,
    database,
    logger: false,
    hasher: testHasher(config.argon2Cost),
    webRoot: NO_WEB_CLIENT,
    ...extra,
  });
  await app.ready();
  return app;
}

let counter = 0;
/** A username no other test uses. */
export function uniqueName(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}${Math.random().toString(36).slice(2, 8)}`;
}

export interface Session {
  userId: string;
  username: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  auth: { authorization: string };
}

export async function signup(app: FastifyInstance, username = uniqueName(), password = GOOD_PASSWORD) {
  const res = await app.inject({ method: 'POST', url: '/api/auth/signup', payload: { username, password } });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; username: string };
}

export async function login(app: FastifyInstance, username: string, password = GOOD_PASSWORD): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  const accessToken = (res.json() as { access_token: string }).access_token;
  const refreshToken = cookie(res, 'app.refresh_token')!.value;
  const me = await app.inject({
    method: 'GET',
    url: '/api/auth/me',
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return {
    userId: (me.json() as { id: string }).id,
    username,
    password,
    accessToken,
    refreshToken,
    auth: { authorization: `Bearer ${accessToken}` },
  };
}

/** A new account, logged in. */
export async function newSession(app: FastifyInstance, prefix?: string): Promise<Session> {
  const { username } = await signup(app, uniqueName(prefix));
  return login(app, username);
}

export function cookie(res: LightMyRequestResponse, name: string) {
  return (res.cookies as Array<{ name: string; value: string; [k: string]: unknown }>).find((c) => c.name === name);
}

/** Asserts an RFC 9457 problem body and returns it. */
export function problemOf(res: LightMyRequestResponse): {
  type: string;
  title: string;
  status: number;
  detail: string;
  code?: string;
  [k: string]: unknown;
} {
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`expected application/problem+json, got ${res.headers['content-type']}: ${res.body}`);
  }
  const body = res.json();
  if (body.status !== res.statusCode) throw new Error(`problem status ${body.status} != HTTP ${res.statusCode}`);
  return body;
}
