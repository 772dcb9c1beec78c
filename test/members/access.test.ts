import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { noteRole, readableBy } from '../../src/members/access.repository.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';

/**
 * Who may read or write a note (issue #38): the SQL predicate queries take (readableBy) and the
 * service the route policy asks (noteRole; writing is its `owner` and `editor`) answer the same
 * matrix — owner, editor, viewer, stranger, on a note outside the trash and on one in it.
 */
type Who = 'owner' | 'editor' | 'viewer' | 'stranger';

forEachDatabase('who may read or write a note', (ctx) => {
  const call = (who: Session, method: string, url: string, payload?: object) =>
    ctx.app.inject({ method: method as 'GET', url, headers: who.auth, ...(payload === undefined ? {} : { payload }) });

  test('readableBy and noteRole agree, role by role, and the trash ends every access', async () => {
    const people = {
      owner: await newSession(ctx.app, 'aown'),
      editor: await newSession(ctx.app, 'aedi'),
      viewer: await newSession(ctx.app, 'avie'),
      stranger: await newSession(ctx.app, 'astr'),
    } satisfies Record<Who, Session>;
    const note = async (title: string) => {
      const id: string = (await call(people.owner, 'POST', '/api/notes', { title, content: 'x' })).json().id;
      for (const [who, role] of [
        ['editor', 'editor'],
        ['viewer', 'viewer'],
      ] as const) {
        const res = await call(people.owner, 'POST', `/api/notes/${id}/members`, {
          username: people[who].username,
          role,
        });
        assert.equal(res.statusCode, 201, res.body);
      }
      return id;
    };
    const live = await note('Live');
    const trashed = await note('Trashed');
    assert.equal((await call(people.owner, 'DELETE', `/api/notes/${trashed}`)).statusCode, 204);
    const db = ctx.database.db;
    const ids = async (predicate: typeof readableBy, userId: string) =>
      (
        await db
          .selectFrom('notes as n')
          .select('n.id')
          .where('n.id', 'in', [live, trashed])
          .where(predicate(userId, 'n'))
          .execute()
      ).map((row) => row.id);

    const expected: Record<Who, { read: boolean; role: string | null }> = {
      owner: { read: true, role: 'owner' },
      editor: { read: true, role: 'editor' },
      viewer: { read: true, role: 'viewer' },
      stranger: { read: false, role: null },
    };
    for (const [who, want] of Object.entries(expected) as Array<[Who, (typeof expected)[Who]]>) {
      const userId = people[who].userId;
      assert.deepEqual(await ids(readableBy, userId), want.read ? [live] : [], `${who} reads`);
      const owner = people.owner.userId;
      assert.deepEqual(await noteRole(db, userId, live), { ownerId: owner, role: want.role }, `${who}'s role`);
      assert.equal(await noteRole(db, userId, trashed), undefined, `${who} on a trashed note`);
    }
    // A missing note is no one's.
    assert.equal(await noteRole(db, people.owner.userId, '00000000-0000-4000-8000-000000000000'), undefined);
    // The predicates are plain SQL that a raw template takes too.
    const raw = await sql<{
      id: string;
    }>`select n.id from notes n where ${readableBy(people.viewer.userId, 'n')}`.execute(db);
    assert.deepEqual(
      raw.rows.map((row) => row.id),
      [live],
    );
  });
});
