import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, forEachDatabase, GOOD_PASSWORD, newSession } from '../helpers/harness.js';
import { pauseAt } from '../helpers/pause.js';
import { until } from '../helpers/until.js';
import { connect, listening } from './support.js';

forEachDatabase(
  'the authors of versions written from a live session',
  (ctx) => {
    test('typing while a version is being written counts for the next version', async () => {
      // The first version's text and authors are taken, and it waits there to be written.
      const pause = pauseAt();
      const held = pause.arm('collab:version');
      const app = await buildTestApp(ctx.config, ctx.database, { checkpoint: pause.checkpoint });
      const { owner, carol, id, history, url } = await sharedNote(app);
      const c = connect(url, id, carol.accessToken);
      try {
        assert.equal(await c.ready, true);
        c.content.insert(c.content.length, 'one\n');
        await held.reached;
        // Carol goes on typing while the version of her first line is being written.
        c.content.insert(c.content.length, 'two\n');
        await until(() => !c.provider.hasUnsyncedChanges, 'the second line acknowledged');
        held.release();
        const note = async () =>
          (await app.inject({ method: 'GET', url: `/api/notes/${id}`, headers: owner.auth })).json();
        await until(async () => (await note()).content === 'start\none\ntwo\n', 'the version of the second line');
        assert.deepEqual(
          (await history()).filter((v) => v.version > 1).map((v) => [v.version, v.authors]),
          [
            [3, [carol.username]],
            [2, [carol.username]],
          ],
        );
      } finally {
        c.destroy();
        await app.close();
      }
    });

    test('a version several people wrote is never seen without all its authors', async () => {
      // Written when the last person leaves (no idle version before: COLLAB_IDLE_SECONDS at its
      // maximum), and held once it is saved, before its authors are.
      const pause = pauseAt();
      const held = pause.arm('notes:version-authors');
      const app = await buildTestApp({ ...ctx.config, collabIdleSeconds: 3600 }, ctx.database, {
        checkpoint: pause.checkpoint,
      });
      const { owner, carol, a, c, history } = await editingTogether(app);
      try {
        assert.equal(await a.ready, true);
        assert.equal(await c.ready, true);
        a.content.insert(0, 'alice ');
        await until(() => c.content.toString() === 'alice start\n', "alice's edit at carol's");
        c.content.insert(c.content.length, 'carol\n');
        await until(() => !c.provider.hasUnsyncedChanges, "carol's edit acknowledged");
        a.destroy();
        c.destroy();
        await held.reached;
        // A reader while the version is held between its save and its authors. PostgreSQL answers
        // it now (from what is committed); SQLite's one connection is the held transaction's, so
        // there the reader queues behind its commit.
        const during = history();
        if (ctx.kind === 'postgres') await during;
        held.release();
        const both = [owner.username, carol.username];
        // Not yet there at all (PostgreSQL), or there with everyone (SQLite, after its commit).
        assert.deepEqual(
          (await during).map((v) => [v.version, v.authors]),
          ctx.kind === 'postgres'
            ? [[1, [owner.username]]]
            : [
                [2, both],
                [1, [owner.username]],
              ],
        );
        await until(async () => (await history())[0]!.version === 2, 'the version written');
        assert.deepEqual(
          (await history()).map((v) => [v.version, v.authors]),
          [
            [2, both],
            [1, [owner.username]],
          ],
        );
      } finally {
        a.destroy();
        c.destroy();
        await app.close();
      }
    });

    test('an author whose account is deleted during the session is left out; the version is still written', async () => {
      const app = await buildTestApp({ ...ctx.config, collabIdleSeconds: 3600 }, ctx.database);
      const { owner, carol, id, a, c, history } = await editingTogether(app);
      try {
        assert.equal(await a.ready, true);
        assert.equal(await c.ready, true);
        // carol writes first: she would be the version's own author.
        c.content.insert(c.content.length, 'carol\n');
        await until(() => a.content.toString() === 'start\ncarol\n', "carol's edit at alice's");
        a.content.insert(0, 'alice ');
        await until(() => !a.provider.hasUnsyncedChanges, "alice's edit acknowledged");
        const gone = await app.inject({
          method: 'DELETE',
          url: '/api/auth/owner',
          headers: carol.auth,
          payload: { password: GOOD_PASSWORD },
        });
        assert.equal(gone.statusCode, 204, gone.body);
        // The last one leaves: the session becomes a version, by alice alone now.
        a.destroy();
        await until(async () => (await history())[0]!.version === 2, 'the version written');
        assert.deepEqual((await history())[0]!.authors, [owner.username]);
        const note = await app.inject({ method: 'GET', url: `/api/notes/${id}`, headers: owner.auth });
        assert.equal(note.json().content, 'alice start\ncarol\n');
      } finally {
        a.destroy();
        c.destroy();
        await app.close();
      }
    });

    test("the map's author entries are the document's, which a client can write: only accounts that may write the note count", async () => {
      const app = await buildTestApp({ ...ctx.config, collabIdleSeconds: 3600 }, ctx.database);
      const { owner, carol, id, a, c, history } = await editingTogether(app);
      const stranger = await newSession(app, 'str');
      try {
        assert.equal(await a.ready, true);
        assert.equal(await c.ready, true);
        // carol names, beside her typing, an id that is no UUID (on PostgreSQL that failed every
        // later version of the note) and a stranger to the note, both before her.
        c.doc.transact(() => {
          const meta = c.doc.getMap('vellum');
          meta.set('author:not-a-uuid', 1);
          meta.set(`author:${stranger.userId}`, 2);
          c.content.insert(c.content.length, 'carol\n');
        });
        await until(() => a.content.toString() === 'start\ncarol\n', "carol's edit at alice's");
        c.destroy();
        a.destroy();
        await until(async () => (await history())[0]!.version === 2, 'the version written');
        assert.deepEqual((await history())[0]!.authors, [carol.username]);
        const note = await app.inject({ method: 'GET', url: `/api/notes/${id}`, headers: owner.auth });
        assert.equal(note.json().content, 'start\ncarol\n');
      } finally {
        a.destroy();
        c.destroy();
        await app.close();
      }
    });
  },
  { COLLAB_IDLE_SECONDS: '0.3' },
);

/**
 * alice (the owner) and carol (an editor) with a note "start" shared between them; `history` is
 * the note's versions as alice reads them, `url` the collab socket's.
 */
async function sharedNote(app: FastifyInstance) {
  const owner = await newSession(app, 'own');
  const carol = await newSession(app, 'car');
  const created = await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: owner.auth,
    payload: { title: 'Shared', content: 'start\n' },
  });
  const id = created.json().id as string;
  const shared = await app.inject({
    method: 'POST',
    url: `/api/notes/${id}/members`,
    headers: owner.auth,
    payload: { username: carol.username, role: 'editor' },
  });
  assert.equal(shared.statusCode, 201, shared.body);
  const url = await listening(app);
  const history = async () =>
    (await app.inject({ method: 'GET', url: `/api/notes/${id}/versions`, headers: owner.auth })).json() as Array<{
      version: number;
      authors: string[];
    }>;
  return { owner, carol, id, history, url };
}

/** The note of `sharedNote` open live by both, each on a connection of their own. */
async function editingTogether(app: FastifyInstance) {
  const shared = await sharedNote(app);
  const { url, id } = shared;
  return { ...shared, a: connect(url, id, shared.owner.accessToken), c: connect(url, id, shared.carol.accessToken) };
}
