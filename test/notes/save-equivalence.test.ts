import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { extractTags } from '../../src/tags/extract.js';
import { createScratchDatabase, databaseKinds, type DatabaseKind, type ScratchDatabase } from '../helpers/databases.js';
import { buildTestApp, newSession, testConfig, type Session } from '../helpers/harness.js';
import { upload } from '../attachments/support.js';
import { dumpRows, type Names } from './save-dump.js';
import { SaveModel, ifMatchHeader, sequence, type Op } from './save-model.js';
import { MISSING_ID } from './support.js';

/**
 * "Write a version" exists twice: statements in TypeScript on SQLite (notes.service.ts) and a
 * PL/pgSQL function on PostgreSQL (migration 2026-11-25-34-a-save-function, now its …_2 of
 * 2026-11-27-81-o-ops3; old instances keep calling the first during a rolling upgrade). This
 * property keeps the two the same: random sequences of note operations go through the HTTP API of
 * a SQLite app and a PostgreSQL app, every
 * answer is compared with a plain model (save-model.ts), and afterwards every table a save writes
 * is read back and must be exactly what the model says — on each database, so the two agree with
 * each other. Without TEST_DATABASE_URL only SQLite runs, still against the model.
 */

interface Instance {
  kind: DatabaseKind;
  scratch: ScratchDatabase;
  database: Database;
  app: FastifyInstance;
  /** The same database with TRASH_DAYS=0: DELETE removes a note at once. */
  appNow: FastifyInstance;
}

const instances: Instance[] = [];

before(async () => {
  for (const kind of databaseKinds) {
    const scratch = await createScratchDatabase(kind);
    const config = testConfig(scratch.url);
    const database = openDatabase(config.database);
    await migrateToLatest(database.db);
    const app = await buildTestApp(config, database);
    const appNow = await buildTestApp(testConfig(scratch.url, { TRASH_DAYS: '0' }), database);
    instances.push({ kind, scratch, database, app, appNow });
  }
});

after(async () => {
  for (const instance of instances) {
    await instance.app.close();
    await instance.appNow.close();
    await instance.database.close();
    await instance.scratch.drop();
  }
});

/** One user's world on one database: its session and the ids behind the names the model uses. */
interface World {
  instance: Instance;
  session: Session;
  names: Names;
}

async function newWorld(instance: Instance, sequenceNumber: number): Promise<World> {
  const session = await newSession(instance.app, 'save');
  const attachments = [];
  for (const n of [0, 1])
    attachments.push((await upload(instance.app, session, Buffer.from(`attachment ${n} of run ${sequenceNumber}`))).id);
  const folder = await instance.app.inject({
    method: 'POST',
    url: '/api/folders',
    headers: session.auth,
    payload: { name: 'Folder' },
  });
  assert.equal(folder.statusCode, 201, folder.body);
  return {
    instance,
    session,
    names: { userId: session.userId, notes: [], attachments, folders: [(folder.json() as { id: string }).id] },
  };
}

/** The model's placeholders as this world's ids, and back. */
function resolve(world: World, text: string): string {
  const [a0, a1] = world.names.attachments as [string, string];
  return text
    .replaceAll('{A0U}', a0.toUpperCase())
    .replaceAll('{A0}', a0)
    .replaceAll('{A1}', a1)
    .replaceAll('{NONE}', MISSING_ID);
}

function unresolve(world: World, text: string): string {
  const [a0, a1] = world.names.attachments as [string, string];
  return text
    .replaceAll(a0.toUpperCase(), '{A0U}')
    .replaceAll(a0, '{A0}')
    .replaceAll(a1, '{A1}')
    .replaceAll(MISSING_ID, '{NONE}');
}

function folderId(world: World, folder: 'F0' | 'missing' | null): string | null {
  return folder === null ? null : folder === 'F0' ? world.names.folders[0]! : MISSING_ID;
}

/** Runs one operation; returns the status and the body's tags when it answers a note. */
async function run(
  world: World,
  model: SaveModel,
  op: Op,
): Promise<{ status: number; etag?: string; tags?: string[]; body: string }> {
  const { app, appNow } = world.instance;
  const auth = world.session.auth;
  const target = op.op === 'create' ? undefined : model.targetOf(op);
  const noteUrl = `/api/notes/${target === undefined ? MISSING_ID : world.names.notes[target]}`;
  const trashUrl = noteUrl.replace('/api/notes/', '/api/trash/');
  const version = target === undefined ? 1 : model.version(target);
  let res;
  switch (op.op) {
    case 'create': {
      const payload = {
        ...(op.title !== undefined && { title: op.title }),
        ...(op.content !== undefined && { content: resolve(world, op.content) }),
        ...(op.folder !== 'none' && { folder_id: folderId(world, op.folder) }),
      };
      res = await app.inject({ method: 'POST', url: '/api/notes', headers: auth, payload });
      if (res.statusCode === 201) world.names.notes.push((res.json() as { id: string }).id);
      break;
    }
    case 'save':
    case 'rename':
    case 'same': {
      const current = target === undefined ? { title: 'x', content: '' } : model.notes[target]!.versions.at(-1)!;
      const payload =
        op.op === 'save'
          ? { title: op.title, content: op.content }
          : { title: op.op === 'rename' ? op.title : current.title, content: current.content };
      const headers = { ...auth, ...ifMatchHeader(op.op === 'save' ? op.ifMatch : 'none', version) };
      res = await app.inject({
        method: 'POST',
        url: `${noteUrl}/versions`,
        headers,
        payload: { title: payload.title, content: resolve(world, payload.content) },
      });
      break;
    }
    case 'restore':
      res = await app.inject({
        method: 'POST',
        url: `${noteUrl}/restore`,
        headers: { ...auth, ...ifMatchHeader(op.ifMatch, version) },
        payload: { version: model.restoreNumber(op) },
      });
      break;
    case 'file': {
      const payload = {
        ...(op.folder !== undefined && { folder_id: folderId(world, op.folder) }),
        ...(op.pinned !== undefined && { pinned: op.pinned }),
        ...(op.archived !== undefined && { archived: op.archived }),
      };
      res = await app.inject({ method: 'PATCH', url: noteUrl, headers: auth, payload });
      break;
    }
    case 'trash':
      res = await app.inject({ method: 'DELETE', url: noteUrl, headers: auth });
      break;
    case 'deleteNow':
      res = await appNow.inject({ method: 'DELETE', url: noteUrl, headers: auth });
      break;
    case 'untrash':
      res = await app.inject({ method: 'POST', url: `${trashUrl}/restore`, headers: auth });
      break;
    case 'purge':
      res = await app.inject({ method: 'DELETE', url: trashUrl, headers: auth });
      break;
  }
  const answer: { status: number; etag?: string; tags?: string[]; body: string } = {
    status: res.statusCode,
    body: res.body,
  };
  if (res.headers.etag !== undefined) answer.etag = String(res.headers.etag);
  if (res.statusCode < 300 && res.statusCode !== 204) answer.tags = (res.json() as { tags: string[] }).tags;
  return answer;
}

let sequences = 0;
/** Words that only one fragment or title holds (save-model.ts). */
const SEARCHED = ['hello', 'party', 'plan'];

test(`random operation sequences leave the same rows as the model (${databaseKinds.join(' and ')})`, async (t) => {
  if (instances.length < 2)
    t.diagnostic(
      'the two saves are compared only with TEST_DATABASE_URL set: without it SQLite runs against the model alone',
    );
  await fc.assert(
    fc.asyncProperty(sequence, async (ops) => {
      sequences += 1;
      const worlds = await Promise.all(instances.map((instance) => newWorld(instance, sequences)));
      const model = new SaveModel();
      for (const [step, op] of ops.entries()) {
        // The request is built from the model before it applies the operation.
        const answers = [];
        for (const world of worlds) answers.push(await run(world, model, op));
        const i = op.op === 'create' ? undefined : model.targetOf(op);
        const want = model.apply(op);
        for (const [w, answer] of answers.entries()) {
          const where = `${worlds[w]!.instance.kind}, step ${step} ${JSON.stringify(op)}: ${answer.body}`;
          assert.equal(answer.status, want, where);
          if (want >= 300) continue;
          const note = model.notes[i ?? model.notes.length - 1]!;
          if (answer.etag !== undefined) assert.equal(answer.etag, `"${note.versions.length}"`, where);
          if (answer.tags !== undefined)
            assert.deepEqual(answer.tags, extractTags(note.versions.at(-1)!.content), where);
        }
      }
      // The search entries hold the right text: SQLite's FTS5 rows cannot be read back, but a search finds them.
      for (const word of SEARCHED) {
        const want = model.found(word);
        const history: string[][] = [];
        for (const world of worlds) {
          const { app } = world.instance;
          const search = async (extra: string) => {
            const res = await app.inject({
              method: 'GET',
              url: `/api/notes/search?q=${word}&limit=100${extra}`,
              headers: world.session.auth,
            });
            assert.equal(res.statusCode, 200, res.body);
            return res.json() as Array<{ id: string; version?: number }>;
          };
          const name = (r: { id: string; version?: number }) =>
            `N${world.names.notes.indexOf(r.id)}${r.version === undefined ? '' : `v${r.version}`}`;
          assert.deepEqual(
            (await search('')).map(name).sort(),
            want,
            `${world.instance.kind}: q=${word} after ${JSON.stringify(ops)}`,
          );
          history.push((await search('&history=true')).map(name).sort());
        }
        for (const other of history.slice(1))
          assert.deepEqual(other, history[0], `history search q=${word} after ${JSON.stringify(ops)}`);
      }
      const expected = model.rows();
      for (const world of worlds) {
        const rows = await dumpRows(world.instance.kind, world.instance.database.db, world.names);
        rows.versions = rows.versions.map((v) => ({ ...v, content: unresolve(world, v.content) }));
        assert.deepEqual(rows, expected, `${world.instance.kind}: the rows after ${JSON.stringify(ops)}`);
      }
    }),
    { numRuns: 25, includeErrorInReport: true },
  );
});
