import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { buildTestApp, forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { connect, frame, listening, type Client } from './support.js';

forEachDatabase(
  'live co-editing at /api/collab',
  (ctx) => {
    let url: string;
    let owner: Session;
    const clients: Client[] = [];
    const open = (noteId: string, token: string | null) => {
      const client = connect(url, noteId, token);
      clients.push(client);
      return client;
    };

    test.before(async () => {
      url = await listening(ctx.app);
      owner = await newSession(ctx.app, 'own');
    });
    test.afterEach(() => {
      for (const client of clients.splice(0)) client.destroy();
    });

    async function newNote(content: string, title = 'Shared'): Promise<string> {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: owner.auth,
        payload: { title, content },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id;
    }
    async function share(noteId: string, who: Session, role: 'editor' | 'viewer') {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${noteId}/members`,
        headers: owner.auth,
        payload: { username: who.username, role },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const note = async (noteId: string) =>
      (await ctx.app.inject({ method: 'GET', url: `/api/notes/${noteId}`, headers: owner.auth })).json();
    const versions = async (noteId: string) =>
      (
        await ctx.app.inject({ method: 'GET', url: `/api/notes/${noteId}/versions`, headers: owner.auth })
      ).json() as Array<{
        version: number;
        author_username: string;
        authors: string[];
      }>;

    test('two editors type on different lines and both lines survive, in the next version too', async () => {
      const carol = await newSession(ctx.app, 'car');
      const id = await newNote('first\nsecond\n');
      await share(id, carol, 'editor');
      const a = open(id, owner.accessToken);
      const c = open(id, carol.accessToken);
      assert.equal(await a.ready, true);
      assert.equal(await c.ready, true);
      assert.equal(a.content.toString(), 'first\nsecond\n');
      a.content.insert(0, 'alice: ');
      // Carol types once alice's words reached her: alice typed first.
      await until(() => c.content.toString().startsWith('alice: '), "alice's edit at carol's");
      c.content.insert(c.content.length, 'carol line\n');
      const both = 'alice: first\nsecond\ncarol line\n';
      await until(() => a.content.toString() === both && c.content.toString() === both, 'both edits everywhere');
      // Idle: a version with both lines, written by both, the first typist first. (On a busy machine
      // carol may type more than COLLAB_IDLE_SECONDS after alice: then alice's line is a version of
      // its own first, and carol's the next.)
      await until(async () => (await note(id)).content === both, 'the idle version');
      const made = (await versions(id)).filter((v) => v.version > 1).reverse();
      assert.ok(made.length === 1 || made.length === 2, `versions made: ${made.length}`);
      assert.equal(made[0]!.author_username, owner.username);
      assert.deepEqual([...new Set(made.flatMap((v) => v.authors))], [owner.username, carol.username]);
    });

    test('a viewer receives the text but cannot change it; a stranger and bad tokens are refused', async () => {
      const viewer = await newSession(ctx.app, 'vie');
      const stranger = await newSession(ctx.app, 'str');
      const id = await newNote('read me\n');
      await share(id, viewer, 'viewer');
      const v = open(id, viewer.accessToken);
      assert.equal(await v.ready, true);
      assert.equal(v.content.toString(), 'read me\n');
      v.content.insert(0, 'vandal ');
      const o = open(id, owner.accessToken);
      assert.equal(await o.ready, true);
      o.content.insert(o.content.length, 'owner\n');
      await until(() => v.content.toString().includes('owner'), 'the owner edit at the viewer');
      assert.equal(o.content.toString(), 'read me\nowner\n');
      assert.equal(await open(id, stranger.accessToken).ready, false);
      assert.equal(await open(id, 'not-a-token').ready, false);
      assert.equal(await open(id, '').ready, false);
    });

    test('an API save during a session reaches the connected clients as an edit', async () => {
      const id = await newNote('one\ntwo\nthree\n');
      const a = open(id, owner.accessToken);
      assert.equal(await a.ready, true);
      // A relative position in "three": kept by an edit, lost by a reset.
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${id}/versions`,
        headers: { ...owner.auth, 'if-match': '"1"' },
        payload: { title: 'Shared', content: 'one\nTWO\nthree\n' },
      });
      assert.ok(res.statusCode < 300, res.body);
      await until(() => a.content.toString() === 'one\nTWO\nthree\n', 'the saved text in the live document');
    });

    test('a WebDAV PUT during a session reaches the connected clients as an edit', async () => {
      const name = `Dav${Date.now()}`;
      const put = (body: string) =>
        ctx.app.inject({ method: 'PUT', url: `/dav/${name}.md`, headers: owner.auth, payload: body });
      assert.equal((await put('first\nsecond\n')).statusCode, 201);
      const list = await ctx.app.inject({ method: 'GET', url: '/api/notes', headers: owner.auth });
      const id = (list.json() as { id: string; title: string }[]).find((n) => n.title === name)!.id;
      const a = open(id, owner.accessToken);
      assert.equal(await a.ready, true);
      assert.equal(a.content.toString(), 'first\nsecond\n');
      assert.ok((await put('first\nSECOND\n')).statusCode < 300);
      await until(() => a.content.toString() === 'first\nSECOND\n', 'the WebDAV save in the live document');
    });

    test('the last person leaving writes a version; nothing unchanged is written', async () => {
      const id = await newNote('start\n');
      const a = open(id, owner.accessToken);
      assert.equal(await a.ready, true);
      a.content.insert(a.content.length, 'more\n');
      await until(() => ctx.app.collab.documentCount > 0, 'the document open');
      a.destroy();
      await until(async () => (await note(id)).content === 'start\nmore\n', 'the version on leaving');
      const b = open(id, owner.accessToken);
      assert.equal(await b.ready, true);
      assert.equal(b.content.toString(), 'start\nmore\n');
      b.destroy();
      await until(() => ctx.app.collab.documentCount === 0, 'the document unloaded');
      assert.equal((await note(id)).version, 2);
    });

    test("a client's broadcast of a stateless message is refused: its connection closes, nobody hears it", async () => {
      const viewer = await newSession(ctx.app, 'spf');
      const id = await newNote('x\n');
      await share(id, viewer, 'viewer');
      const o = open(id, owner.accessToken);
      const v = open(id, viewer.accessToken);
      assert.equal(await o.ready, true);
      assert.equal(await v.ready, true);
      // What the server sends a member made viewer, asked by the viewer to go to everyone
      // (MessageType.BroadcastStateless): the owner's editor would have turned read-only.
      const spoof = frame(id, 6, JSON.stringify({ type: 'role', role: 'viewer' }));
      v.provider.configuration.websocketProvider.webSocket!.send(spoof);
      await until(() => v.closedReason() === 'Forbidden', "the viewer's connection closed");
      // The owner's connection carries on, and heard nothing.
      o.content.insert(0, 'still ');
      await until(async () => (await note(id)).content === 'still x\n', "the owner's edit saved");
      assert.deepEqual(o.stateless(), []);
      assert.equal(o.closedReason(), undefined);
    });

    test('a live title past 200 characters (two people typing into it at once): the version keeps the first 200', async () => {
      const carol = await newSession(ctx.app, 'ttl');
      const id = await newNote('x\n', 'T');
      await share(id, carol, 'editor');
      const a = open(id, owner.accessToken);
      const c = open(id, carol.accessToken);
      assert.equal(await a.ready, true);
      assert.equal(await c.ready, true);
      // Each stays within the limit; together they are past it. An emoji is one character of the 200.
      a.title.insert(1, '😀'.repeat(150));
      c.title.insert(1, 'b'.repeat(150));
      await until(() => a.title.length === c.title.length && a.title.length === 1 + 300 + 150, 'both in both');
      const live = [...a.title.toString()];
      await until(async () => (await note(id)).version === 2, 'the version written');
      const saved = await note(id);
      assert.equal(saved.title, live.slice(0, 200).join(''));
      assert.equal([...saved.title].length, 200);
      // The account's export imports again.
      const exported = await ctx.app.inject({ url: '/api/export', headers: owner.auth });
      assert.equal(exported.statusCode, 200);
      const imported = await ctx.app.inject({
        method: 'POST',
        url: '/api/import',
        headers: { ...owner.auth, 'content-type': 'application/json' },
        payload: exported.body,
      });
      assert.equal(imported.statusCode, 201, imported.body);
    });

    test('removing a member closes their connection', async () => {
      const ed = await newSession(ctx.app, 'rem');
      const id = await newNote('x\n');
      await share(id, ed, 'editor');
      const e = open(id, ed.accessToken);
      assert.equal(await e.ready, true);
      const res = await ctx.app.inject({
        method: 'DELETE',
        url: `/api/notes/${id}/members/${ed.userId}`,
        headers: owner.auth,
      });
      assert.equal(res.statusCode, 204, res.body);
      await until(() => e.closedReason() === 'Forbidden', 'the session ended');
    });

    test('a save merges with unsaved live typing on other lines, and a restore arrives as an edit too', async () => {
      const id = await newNote('a\nb\nc\n');
      const a = open(id, owner.accessToken);
      assert.equal(await a.ready, true);
      // Live typing, a version or not yet: either way the typed line must survive the save.
      a.content.insert(0, 'typed ');
      await until(() => !a.provider.hasUnsyncedChanges, 'the edit acknowledged');
      const saved = await ctx.app.inject({
        method: 'POST',
        // From version 1, merged on the server if the live text became a version meanwhile.
        url: `/api/notes/${id}/versions?merge=true`,
        headers: { ...owner.auth, 'if-match': '"1"' },
        payload: { title: 'Shared', content: 'a\nb\nC\n' },
      });
      assert.ok(saved.statusCode < 300, saved.body);
      await until(() => a.content.toString() === 'typed a\nb\nC\n', 'the save merged into the live text');
      const restored = await ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${id}/restore`,
        headers: owner.auth,
        payload: { version: 1 },
      });
      assert.ok(restored.statusCode < 300, restored.body);
      await until(() => !a.content.toString().includes('C'), 'the restore in the live text');
    });

    test('a save that carries live typing it saw (autosaved while its socket was away) adds that typing once', async () => {
      const id = await newNote('one\ntwo\nthree');
      const carol = open(id, owner.accessToken);
      assert.equal(await carol.ready, true);
      carol.content.insert('one\ntwo\nthree'.length, ' C');
      await until(() => !carol.provider.hasUnsyncedChanges, 'the edit acknowledged');
      // Another device saw " C" live, typed " A", lost its socket and saved its text from version 1.
      const saved = await ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${id}/versions?merge=true`,
        headers: { ...owner.auth, 'if-match': '"1"' },
        payload: { title: 'Shared', content: 'one A\ntwo\nthree C' },
      });
      assert.ok(saved.statusCode < 300, saved.body);
      await until(() => carol.content.toString().includes(' A'), 'the save in the live text');
      assert.equal(carol.content.toString(), 'one A\ntwo\nthree C');
      assert.equal((await note(id)).content, 'one A\ntwo\nthree C');
    });

    test('ending the session (logout) and trashing the note end the live session', async () => {
      const ed = await newSession(ctx.app, 'out');
      const id = await newNote('y\n');
      await share(id, ed, 'editor');
      const e = open(id, ed.accessToken);
      const o = open(id, owner.accessToken);
      assert.equal(await e.ready, true);
      assert.equal(await o.ready, true);
      const out = await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: ed.auth });
      assert.equal(out.statusCode, 204, out.body);
      await until(() => e.closedReason() === 'Unauthorized', "the editor's session ended");
      assert.equal(o.closedReason(), undefined);
      const trashed = await ctx.app.inject({ method: 'DELETE', url: `/api/notes/${id}`, headers: owner.auth });
      assert.equal(trashed.statusCode, 204, trashed.body);
      await until(() => o.closedReason() === 'Forbidden', "the owner's session ended with the trash");
    });

    const setRole = (noteId: string, who: Session, role: 'editor' | 'viewer') =>
      ctx.app.inject({
        method: 'PATCH',
        url: `/api/notes/${noteId}/members/${who.userId}`,
        headers: owner.auth,
        payload: { role },
      });

    test('a member made viewer is told, writes nothing, and made editor again is told and writes again', async () => {
      const ed = await newSession(ctx.app, 'dem');
      const id = await newNote('z\n');
      await share(id, ed, 'editor');
      const e = open(id, ed.accessToken);
      const o = open(id, owner.accessToken);
      assert.equal(await e.ready, true);
      assert.equal(await o.ready, true);
      e.content.insert(0, 'allowed ');
      await until(() => o.content.toString() === 'allowed z\n', 'the editor edit');
      await until(() => !e.provider.hasUnsyncedChanges, 'the edit acknowledged');
      assert.deepEqual(e.stateless(), []);

      const demoted = await setRole(id, ed, 'viewer');
      assert.equal(demoted.statusCode, 200, demoted.body);
      await until(() => e.stateless().length > 0, 'the role message at the demoted member');
      assert.deepEqual(e.stateless(), [{ type: 'role', role: 'viewer' }]);
      assert.deepEqual(o.stateless(), [], 'the owner is told nothing');
      assert.equal(ctx.app.collab.isReadOnly(id, ed.userId), true);

      // Typed after the message: dropped. The server takes a connection's messages in order, so once
      // the awareness state sent after the edit has reached the owner, the edit would have too.
      e.content.insert(0, 'refused ');
      e.provider.setAwarenessField('mark', 'after the refused edit');
      await until(
        () => [...o.provider.awareness!.getStates().values()].some((state) => state.mark === 'after the refused edit'),
        "the demoted member's later awareness at the owner",
      );
      assert.equal(o.content.toString(), 'allowed z\n');
      assert.equal(e.provider.hasUnsyncedChanges, true, 'the dropped edit is never acknowledged');
      // The viewer still receives the others' typing.
      o.content.insert(o.content.length, 'owner\n');
      await until(() => e.content.toString() === 'refused allowed z\nowner\n', 'the owner edit at the viewer');
      assert.equal(o.content.toString(), 'allowed z\nowner\n');

      const promoted = await setRole(id, ed, 'editor');
      assert.equal(promoted.statusCode, 200, promoted.body);
      await until(() => e.stateless().length > 1, 'the second role message');
      assert.deepEqual(e.stateless(), [
        { type: 'role', role: 'viewer' },
        { type: 'role', role: 'editor' },
      ]);
      assert.equal(ctx.app.collab.isReadOnly(id, ed.userId), false);
      // As docs/api.md asks of a client made editor again (the web client does it): a sync, which
      // sends what the server dropped meanwhile; then the next edits apply as before.
      e.provider.forceSync();
      await until(() => !e.provider.hasUnsyncedChanges, 'the sync acknowledged');
      e.content.insert(e.content.length, 'back\n');
      const all = 'refused allowed z\nowner\nback\n';
      await until(() => o.content.toString() === all, 'the edits of the member made editor again at the owner');
      assert.equal(e.content.toString(), all);
    });

    /**
     * Another instance (its own connections to the same database) whose last person leaves while
     * the test holds its version at `step`: before it is written, or between writing it and storing
     * the state that took it in.
     */
    async function leavingInstance(id: string, step: 'collab:version' | 'collab:version-written') {
      let reached!: () => void;
      const held = new Promise<void>((r) => {
        reached = r;
      });
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let waits!: () => void;
      const closeWaits = new Promise<void>((r) => {
        waits = r;
      });
      const database = openDatabase(ctx.config.database);
      const app = await buildTestApp(ctx.config, database, {
        checkpoint: async (reachedStep) => {
          if (reachedStep === 'collab:close-waits') waits();
          if (reachedStep !== step) return;
          reached();
          await released;
        },
      });
      const a = connect(await listening(app), id, owner.accessToken);
      assert.equal(await a.ready, true);
      a.content.insert(a.content.length, 'typed\n');
      await until(() => !a.provider.hasUnsyncedChanges, 'the edit acknowledged');
      a.destroy();
      await held;
      // Unloaded: Hocuspocus' own store (the typed text, without the version's number) is done.
      await until(() => app.collab.documentCount === 0, 'the document unloaded');
      return { app, database, release, closeWaits };
    }

    test('a restart while the last person leaving is writing the version: version and state stored first', async () => {
      const id = await newNote('before\n');
      const other = await leavingInstance(id, 'collab:version');
      // As a deploy stops the process: the app closes, then its database.
      const closed = other.app.close().then(() => other.database.close());
      // Closing waits for the version and its state (or, without that wait, closes the database under them).
      await Promise.race([closed, other.closeWaits]);
      other.release();
      await closed;
      assert.equal((await note(id)).content, 'before\ntyped\n');
      const b = open(id, owner.accessToken);
      assert.equal(await b.ready, true);
      assert.equal(b.content.toString(), 'before\ntyped\n');
    });

    test('an instance stopping between the version and its state doubles nothing at the next load', async () => {
      const id = await newNote('before\n');
      // Held for good there, as a process killed at that point (or a replica's late store) leaves it.
      const other = await leavingInstance(id, 'collab:version-written');
      try {
        assert.equal((await note(id)).content, 'before\ntyped\n');
        const b = open(id, owner.accessToken);
        assert.equal(await b.ready, true);
        assert.equal(b.content.toString(), 'before\ntyped\n');
        b.destroy();
      } finally {
        other.release();
        await other.app.close();
        await other.database.close();
      }
    });

    test('a restart mid-session loses nothing acknowledged', async () => {
      const id = await newNote('before\n');
      const a = open(id, owner.accessToken);
      assert.equal(await a.ready, true);
      a.content.insert(a.content.length, 'typed\n');
      await until(() => !a.provider.hasUnsyncedChanges, 'the edit acknowledged');
      a.destroy();
      await ctx.rebuild({ COLLAB_IDLE_SECONDS: '3600' });
      url = await listening(ctx.app);
      const b = open(id, owner.accessToken);
      assert.equal(await b.ready, true);
      assert.equal(b.content.toString(), 'before\ntyped\n');
    });
  },
  { COLLAB_IDLE_SECONDS: '0.3' },
);
