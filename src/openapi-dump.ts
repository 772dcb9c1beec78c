import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/database.js';

/**
 * The OpenAPI document, built from the app factory on a throw-away in-memory database: the same
 * document `GET /api/openapi.json` serves with the default configuration, no server needed. At src/'s
 * root, beside app.ts: in ops/ it made ops and app.ts import each other (test/architecture.test.ts).
 */
export async function buildOpenApiDocument(env: Record<string, string> = {}): Promise<unknown> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', PWNED_PASSWORDS_URL: 'off', ...env });
  const database = openDatabase(config.database);
  const app = await buildApp({ config, database, logger: false });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await database.close();
  }
}
