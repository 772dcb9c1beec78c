import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { CSRF_SECRET, GOOD_PASSWORD, JWT_SECRET, TEST_ENV, testConfig, uniqueName } from '../helpers/harness.js';
import { startProcess, type ServerProcess } from '../helpers/server-process.js';
import { entryArgs } from '../helpers/entry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NOTES = 5;
const WRITERS = 50;
/** Acknowledged saves to wait for before the kill: batches are then in flight on every connection. */
const KILL_AFTER = 400;

/**
 * kill -9 while saves are in flight (issue #28): this process, outside the server, counts which
 * saves were acknowledged (204 with their version); after the kill the database must hold every
 * one of them, under the number announced, with each note's history gap-free. Saves still in flight
 * may or may not have landed — they were never acknowledged.
 */
for (const kind of databaseKinds) {
  describe(`kill -9 during concurrent saves loses no acknowledged save [${kind}]`, () => {
    let scratch: ScratchDatabase | undefined;
    let server: ServerProcess | undefined;
    after(async () => {
      await server?.kill();
      await scratch?.drop();
    });

    test(`${WRITERS} writers over ${NOTES} notes, killed after ${KILL_AFTER} acknowledgements`, {
      timeout: 120_000,
    }, async () => {
      scratch = await createScratchDatabase(kind);
      server = startProcess(process.execPath, entryArgs('main'), {
        cwd: ROOT,
        env: {
          ...TEST_ENV,
          HOME: os.tmpdir(),
          PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: scratch.url,
          JWT_SECRET,
          CSRF_SECRET,
          PWNED_PASSWORDS_URL: 'off',
          RATE_LIMIT: 'off',
          LOG_LEVEL: 'info',
        },
      });
      const base = `http://127.0.0.1:${await server.port(90_000)}`;
      const json = { 'content-type': 'application/json' };
      const username = uniqueName('crash');
      assert.equal(
        (
          await fetch(`${base}/api/auth/signup`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ username, password: GOOD_PASSWORD }),
          })
        ).status,
        201,
      );
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username, password: GOOD_PASSWORD }),
      });
      const { access_token: token } = (await login.json()) as { access_token: string };
      const headers = { ...json, authorization: `Bearer ${token}` };
      const ids: string[] = [];
      for (let i = 0; i < NOTES; i++) {
        const res = await fetch(`${base}/api/notes`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: `n${i}`, content: '' }),
        });
        ids.push(((await res.json()) as { id: string }).id);
      }

      // Per note, the version each acknowledged save was told, and the title it wrote.
      const acknowledged = ids.map(() => new Map<number, string>());
      let count = 0;
      let killed = false;
      let reachedKill: () => void = () => undefined;
      const killNow = new Promise<void>((resolve) => {
        reachedKill = resolve;
      });
      const writer = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const n = (w + i) % NOTES;
          const title = `w${w}-${i}`;
          let res: Response;
          try {
            res = await fetch(`${base}/api/notes/${ids[n]}/versions`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ title, content: `#t${i % 4} ${title}` }),
            });
          } catch {
            return; // the connection died with the server
          }
          if (res.status !== 204) {
            assert.ok(killed, `a save answered ${res.status} before the kill`);
            return;
          }
          acknowledged[n]!.set(Number(res.headers.get('etag')!.slice(1, -1)), title);
          if (++count === KILL_AFTER) reachedKill();
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      await killNow;
      killed = true;
      server.child.kill('SIGKILL');
      await server.exited;
      await Promise.all(writers);

      const database = openDatabase(testConfig(scratch.url).database);
      try {
        for (const [n, id] of ids.entries()) {
          const { rows } = await sql<{ version: number; title: string }>`
            select version, title from note_versions where note_id = ${id} order by version`.execute(database.db);
          const versions = rows.map((row) => Number(row.version));
          assert.deepEqual(
            versions,
            Array.from({ length: versions.length }, (_, i) => i + 1),
            `note ${n}: history is gap-free`,
          );
          const titles = new Map(rows.map((row) => [Number(row.version), row.title]));
          for (const [version, title] of acknowledged[n]!) {
            assert.equal(titles.get(version), title, `note ${n}: acknowledged version ${version} is there`);
          }
          const {
            rows: [note],
          } = await sql<{ version: number }>`select version from notes where id = ${id}`.execute(database.db);
          assert.equal(Number(note!.version), versions.length, `note ${n}: the note is at its last version`);
        }
        assert.ok(count >= KILL_AFTER);
      } finally {
        await database.close();
      }
    });
  });
}
