import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';

// Closing a SQLite database waits for its checkpoint thread to let go of the file (src/db/sqlite.ts),
// also when nothing was ever asked of it: a SIGTERM during start-up closes it before any query.

test('a SQLite database closes, and lets go of its file, whether or not it was used', { timeout: 30_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-close-'));
  try {
    const unused = openDatabase({ kind: 'sqlite', filename: path.join(dir, 'unused.db') });
    await unused.close();
    const used = openDatabase({ kind: 'sqlite', filename: path.join(dir, 'used.db') });
    await sql`select 1`.execute(used.db);
    await used.close();
    // Nothing opens the files again once closed: the folder can go.
    fs.rmSync(dir, { recursive: true });
    assert.equal(fs.existsSync(dir), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
