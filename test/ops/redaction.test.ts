import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/databases.js';
import { newSession, testConfig, type Session } from '../helpers/harness.js';
import { captureLogs, type CapturedLogs } from '../helpers/logs.js';
import { uploadRaw } from '../attachments/support.js';

/** LOG_LEVEL=trace is what an operator turns on to debug; it must not hand out the callers' tokens. */
let scratch: ScratchDatabase;
let database: Database;
let app: FastifyInstance;
let logs: CapturedLogs;
let session: Session;

before(async () => {
  scratch = await createScratchDatabase('sqlite');
  const config = testConfig(scratch.url, { LOG_LEVEL: 'trace' });
  database = openDatabase(config.database);
  await migrateToLatest(database.db);
  logs = captureLogs('trace');
  app = await buildApp({ config, database, logger: logs.logger });
  await app.ready();
  session = await newSession(app, 'trace');
});
after(async () => {
  await app?.close();
  await database?.close();
  await scratch?.drop();
});

test('at trace level no log line carries the bearer token, cookie or CSRF header (multipart included)', async () => {
  const token = session.auth.authorization.slice('Bearer '.length);
  const res = await uploadRaw(app, session, Buffer.from('hello'), { filename: 'a.txt', type: 'text/plain' });
  assert.equal(res.statusCode, 201, res.body);
  await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: { ...session.auth, cookie: 'refresh_token=secret-cookie-value', 'x-csrf-token': 'secret-csrf-value' },
    payload: { title: 't' },
  });
  const text = logs.lines.join('\n');
  assert.ok(logs.lines.length > 5, 'trace logs were written');
  assert.ok(!text.includes(token), 'the access token is in a log line');
  assert.ok(!text.includes('secret-cookie-value'));
  assert.ok(!text.includes('secret-csrf-value'));
});
