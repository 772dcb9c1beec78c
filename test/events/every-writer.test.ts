import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inTransaction, noteChanged } from '../../src/db/effects.js';
import { inWriteTransaction } from '../../src/db/group-commit.js';
import { runTask } from '../../src/jobs/maintenance.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { runCli } from '../helpers/cli.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { forEachDatabase, GOOD_PASSWORD, newSession, type Session } from '../helpers/harness.js';

/**
 * Live changes (docs/api.md, "Live changes") whoever makes the change: an import, WebDAV, the trash
 * purge of the hourly job and of the CLI, not only the notes API — and nothing of a write that
 * rolled back. "Nothing arrived" is shown by a later change of the same user arriving alone.
 */
forEachDatabase('live changes from every writer', (ctx) => {
  let base = '';
  const streams: Stream[] = [];
  const open = async (who: Session) => {
    const stream = await Stream.open(base, who.accessToken);
    assert.equal(stream.status, 200);
    streams.push(stream);
    return stream;
  };
  before(async () => {
    base = await listen(ctx.app);
  });
  after(() => {
    for (const stream of streams) stream.close();
  });
  const call = (who: Session, method: string, url: string, payload?: object) =>
    ctx.app.inject({ method: method as 'GET', url, headers: who.auth, ...(payload === undefined ? {} : { payload }) });
  const importDoc = (who: Session, doc: unknown, existing = 'copy') =>
    ctx.app.inject({
      method: 'POST',
      url: `/api/import?existing=${existing}`,
      headers: { ...who.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(doc),
    });
  const idsOf = async (who: Session): Promise<string[]> =>
    ((await call(who, 'GET', '/api/notes')).json() as Array<{ id: string }>).map((n) => n.id);
  /** A change of the user's own after everything before it: once it arrives, nothing else is on the way. */
  async function nothingElse(
    who: Session,
    stream: Stream,
    besides: (e: Stream['events'][number]) => boolean = () => false,
  ): Promise<void> {
    const sentinel = (await call(who, 'POST', '/api/notes', { title: 'sentinel' })).json().id as string;
    await stream.next('note.created', sentinel);
    assert.deepEqual(
      stream.events.filter((e) => !besides(e)),
      [],
    );
  }

  test('an import tells of every note it created, and an import that rolls back tells nothing', async () => {
    const user = await newSession(ctx.app, 'fximp');
    const stream = await open(user);
    const first = (await call(user, 'POST', '/api/notes', { title: 'First', content: 'one' })).json().id as string;
    await stream.next('note.created', first);
    const exported = JSON.parse((await call(user, 'GET', '/api/export')).body) as {
      notes: Array<Record<string, unknown>>;
    };

    const res = await importDoc(user, exported);
    assert.equal(res.statusCode, 201, res.body);
    const [copy] = (await idsOf(user)).filter((id) => id !== first);
    assert.ok(copy !== undefined);
    assert.deepEqual((await stream.next('note.created', copy)).data, { id: copy });

    // One note already here and one new: existing=ask writes the new one, then rolls everything back (409).
    const fresh = {
      ...exported.notes[0]!,
      title: 'Fresh',
      versions: (exported.notes[0]!.versions as object[]).map((v) => ({ ...v, title: 'Fresh' })),
    };
    const refused = await importDoc(user, { ...exported, notes: [fresh, exported.notes[0]] }, 'ask');
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal((await idsOf(user)).length, 2);
    await nothingElse(user, stream);
  });

  // The API cannot make a write fail after its change is recorded, on purpose: so the unit of work
  // is driven directly. A change with its audience given (as a delete's is) would reach the member
  // if it were told before the commit.
  test('a change recorded in a transaction that rolls back is never told; one in a write that ran again after its batch failed is told once', async () => {
    const member = await newSession(ctx.app, 'fxrb');
    const stream = await open(member);
    const told = (noteId: string) => ({ type: 'note.deleted' as const, noteId, users: [member.userId] });
    const boom = new Error('boom');
    await assert.rejects(
      inTransaction(ctx.database.db, async (trx) => {
        noteChanged(trx, told('10000000-0000-4000-8000-000000000001'));
        throw boom;
      }),
      boom,
    );
    // Two writes at once share a batch on SQLite: the failing one makes the batch run again, each in a savepoint.
    const kept = '10000000-0000-4000-8000-000000000003';
    const [ok, failed] = await Promise.allSettled([
      inWriteTransaction(ctx.database.db, async (trx) => {
        noteChanged(trx, told(kept));
        await trx.selectFrom('users').select('id').limit(1).execute();
      }),
      inWriteTransaction(ctx.database.db, async (trx) => {
        noteChanged(trx, told('10000000-0000-4000-8000-000000000004'));
        await trx.selectFrom('users').select('id').limit(1).execute();
        throw boom;
      }),
    ]);
    assert.equal(ok.status, 'fulfilled');
    assert.equal(failed.status, 'rejected');
    await stream.next('note.deleted', kept);
    await nothingElse(member, stream);
  });

  test('WebDAV: PUT, MOVE, COPY and DELETE of notes and folders tell the owner and the members', async () => {
    const owner = await newSession(ctx.app, 'fxdav');
    const member = await newSession(ctx.app, 'fxdavm');
    const token = (
      await call(owner, 'POST', '/api/auth/tokens', { name: 'dav', scopes: ['dav'], password: GOOD_PASSWORD })
    ).json().token as string;
    const basic = { authorization: `Basic ${Buffer.from(`${owner.username}:${token}`).toString('base64')}` };
    const dav = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
      ctx.app.inject({
        method: method as 'GET',
        url,
        headers: { ...basic, ...headers },
        ...(payload === undefined ? {} : { payload }),
      });
    const [ownerStream, memberStream] = [await open(owner), await open(member)];

    assert.equal((await dav('PUT', '/dav/Plan.md', { 'content-type': 'text/markdown' }, 'v1')).statusCode, 201);
    const [id] = await idsOf(owner);
    assert.ok(id !== undefined);
    await ownerStream.next('note.created', id);
    assert.equal(
      (await call(owner, 'POST', `/api/notes/${id}/members`, { username: member.username, role: 'viewer' })).statusCode,
      201,
    );
    await memberStream.next('share.changed', id);

    assert.equal((await dav('PUT', '/dav/Plan.md', { 'content-type': 'text/markdown' }, 'v2')).statusCode, 204);
    for (const stream of [ownerStream, memberStream]) {
      assert.deepEqual((await stream.next('note.updated', id)).data, {
        id,
        version: 2,
        author_username: owner.username,
      });
    }
    // A new name is a new title (a version); another folder is filing.
    assert.equal((await dav('MOVE', '/dav/Plan.md', { destination: '/dav/Renamed.md' })).statusCode, 201);
    assert.deepEqual((await memberStream.next('note.updated', id)).data, {
      id,
      version: 3,
      author_username: owner.username,
    });
    assert.equal((await dav('MKCOL', '/dav/Box/')).statusCode, 201);
    assert.equal((await dav('MOVE', '/dav/Renamed.md', { destination: '/dav/Box/Renamed.md' })).statusCode, 201);
    await memberStream.next('note.filed', id);
    assert.equal((await dav('DELETE', '/dav/Box/Renamed.md')).statusCode, 204);
    await memberStream.next('note.trashed', id);
    await ownerStream.next('note.trashed', id);
    // Restored from the trash, the note is told of again.
    assert.equal((await call(owner, 'POST', `/api/trash/${id}/restore`)).statusCode, 200);
    await memberStream.next('note.restored', id);
    // A folder copied whole: each note in it is a new note; a folder deleted: each note in it goes to the trash.
    assert.equal((await dav('COPY', '/dav/Box/', { destination: '/dav/Copy/' })).statusCode, 201);
    const copied = (await idsOf(owner)).find((other) => other !== id);
    assert.ok(copied !== undefined);
    await ownerStream.next('note.created', copied);
    assert.equal((await dav('DELETE', '/dav/Box/')).statusCode, 204);
    await memberStream.next('note.trashed', id);
    for (const type of ['share.changed', 'note.updated', 'note.filed', 'note.restored', 'note.trashed'])
      await ownerStream.next(type, id);
    await nothingElse(member, memberStream);
    await nothingElse(owner, ownerStream);
  });

  test('the hourly trash purge tells the owner and the members of every note it deletes', async () => {
    const owner = await newSession(ctx.app, 'fxpur');
    const member = await newSession(ctx.app, 'fxpurm');
    const memberStream = await open(member);
    const id = (await call(owner, 'POST', '/api/notes', { title: 'Doomed' })).json().id as string;
    assert.equal(
      (await call(owner, 'POST', `/api/notes/${id}/members`, { username: member.username, role: 'editor' })).statusCode,
      201,
    );
    await memberStream.next('share.changed', id);
    assert.equal((await call(owner, 'DELETE', `/api/notes/${id}`)).statusCode, 204);
    await memberStream.next('note.trashed', id);
    const ownerStream = await open(owner);

    const purge = maintenanceTasks(ctx.config).find((task) => task.name === 'trash-purge')!;
    const later = new Date(Date.now() + (ctx.config.trashDays + 1) * 24 * 60 * 60 * 1000);
    const outcome = await runTask(ctx.database, purge, later);
    assert.equal(outcome.status, 'done');
    await memberStream.next('note.deleted', id);
    await ownerStream.next('note.deleted', id);
    // The member was added just after the note was made: its note.created, whose audience is read
    // when it is delivered (events/live.ts), may reach them too, rightly (they may read it by then).
    await nothingElse(member, memberStream, (e) => e.type === 'note.created' && e.data.id === id);
  });

  // The CLI is its own process: on PostgreSQL its purge reaches the server's streams by NOTIFY (on
  // SQLite without Redis there is no channel between processes, so no one to tell).
  if (ctx.kind === 'postgres')
    test("the CLI's maintenance tells the server's streams of the notes its purge deleted", async () => {
      const owner = await newSession(ctx.app, 'fxcli');
      const stream = await open(owner);
      const id = (await call(owner, 'POST', '/api/notes', { title: 'Gone' })).json().id as string;
      await stream.next('note.created', id);
      assert.equal((await call(owner, 'DELETE', `/api/notes/${id}`)).statusCode, 204);
      await stream.next('note.trashed', id);
      const { code } = await runCli(['maintenance'], {
        DATABASE_URL: (ctx.config.database as { url: string }).url,
        TRASH_DAYS: '0',
      });
      assert.equal(code, 0);
      await stream.next('note.deleted', id);
    });
});
