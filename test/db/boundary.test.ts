import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type KyselyPlugin, type Kysely } from 'kysely';
import * as users from '../../src/accounts/user.repository.js';
import { compiled } from '../../src/db/compiled.js';
import { dialectTypes } from '../../src/db/dialect-types.js';
import { parseBytea, parseInt8, parseTimestamptz } from '../../src/db/postgres.js';
import * as notes from '../../src/notes/notes.repository.js';
import { newId } from '../../src/shared/ids.js';
import { forEachDatabase, uniqueName } from '../helpers/harness.js';

/** Rows leave src/db with the same plain values on both databases; nothing above converts. */
forEachDatabase('dialect boundary', (ctx) => {
  async function addUser(isAdmin: boolean, createdAt: string): Promise<string> {
    const id = newId();
    await users.insertUser(ctx.database.db, {
      id,
      username: uniqueName(),
      password_hash: 'x',
      is_admin: isAdmin,
      created_at: createdAt,
      updated_at: createdAt,
    });
    return id;
  }

  test('timestamps come back as the ISO strings written, milliseconds included; booleans as booleans', async () => {
    for (const [time, admin] of [
      ['2026-01-02T03:04:05.000Z', true],
      ['2026-01-02T03:04:05.120Z', false],
      ['1999-12-31T23:59:59.999Z', true],
    ] as const) {
      const id = await addUser(admin, time);
      const viaBuilder = await ctx.database.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const viaCompiled = await users.findUserById(ctx.database.db, id);
      for (const row of [viaBuilder, viaCompiled]) {
        assert.equal(row?.created_at, time);
        assert.equal(row?.is_admin, admin);
      }
    }
  });

  test('booleans bind in filters and in compiled queries (false and true)', async () => {
    const id = await addUser(true, '2026-01-02T03:04:05.000Z');
    const admins = await ctx.database.db
      .selectFrom('users')
      .select('id')
      .where('is_admin', '=', true)
      .where('id', '=', id)
      .execute();
    assert.deepEqual(admins, [{ id }]);
    const byFlag = compiled((db, p: { id: string; admin: boolean }) =>
      db.selectFrom('users').select(['id', 'is_admin']).where('id', '=', p.id).where('is_admin', '=', p.admin),
    );
    assert.deepEqual(await byFlag.execute(ctx.database.db, { id, admin: true }), [{ id, is_admin: true }]);
    assert.deepEqual(await byFlag.execute(ctx.database.db, { id, admin: false }), []);
  });

  test('UTF-8 text stored as bytes reads back as the same string, NUL and astral characters included', async () => {
    const owner = await addUser(false, '2026-01-02T03:04:05.000Z');
    const id = newId();
    const versionId = newId();
    const title = 'a\u0000b 🦊 עברית e\u0301';
    const content = '\u0000'.repeat(3) + '𝄞'.repeat(1000);
    const now = '2026-01-02T03:04:05.006Z';
    await ctx.database.db.transaction().execute(async (trx) => {
      await notes.insertNote(trx, { id, owner_id: owner, title, version_id: versionId, now });
      await notes.insertVersion(trx, {
        id: versionId,
        note_id: id,
        version: 1,
        title,
        content,
        created_at: now,
        author_id: owner,
      });
    });
    assert.deepEqual(await notes.findNote(ctx.database.db, owner, id), {
      id,
      owner_id: owner,
      title,
      content,
      version: 1,
      version_id: versionId,
      created_at: now,
      updated_at: now,
      folder_id: null,
      pinned: false,
      archived: false,
      tags: '',
    });
    assert.deepEqual(await notes.listNotes(ctx.database.db, owner, { archived: false }, undefined), [
      {
        id,
        owner_id: owner,
        title,
        updated_at: now,
        version_id: versionId,
        folder_id: null,
        pinned: false,
        archived: false,
        tags: '',
      },
    ]);
    // The text's first 1,024 bytes: 3 NULs and 255 four-byte characters; the cut through the 256th drops it.
    assert.deepEqual(
      await notes.versionHeads(ctx.database.db, [versionId, newId()], 1024),
      new Map([[versionId, '\u0000'.repeat(3) + '𝄞'.repeat(255)]]),
    );
  });

  test('bigint comes back as a number', async () => {
    await ctx.database.db
      .insertInto('auth_events')
      .values({
        id: newId(),
        user_id: null,
        username: null,
        kind: 'login',
        outcome: 'success',
        ip_address: null,
        user_agent: null,
        detail: null,
        created_at: '2026-01-02T03:04:05.000Z',
      })
      .execute();
    const row = await ctx.database.db.selectFrom('auth_events').select('seq').executeTakeFirstOrThrow();
    assert.equal(typeof row.seq, 'number');
  });

  test('columns made with the migration helper read back as plain values', async () => {
    const db = ctx.database.db as unknown as Kysely<any>;
    const t = dialectTypes(db);
    await db.schema
      .createTable('boundary_probe')
      .addColumn('id', t.uuid, (c) => c.primaryKey())
      .addColumn('flag', t.boolean, (c) => c.notNull().defaultTo(t.false))
      .addColumn('at', t.timestamp, (c) => c.notNull())
      .addColumn('body', t.utf8, (c) => c.notNull())
      .addColumn('big', t.bigint, (c) => c.notNull())
      .execute();
    try {
      const a = newId();
      const b = newId();
      await db
        .insertInto('boundary_probe')
        .values({ id: a, flag: true, at: '2026-05-06T07:08:09.010Z', body: Buffer.from('x\u0000y'), big: 2 ** 40 })
        .execute();
      await db
        .insertInto('boundary_probe')
        .values({ id: b, at: '2026-05-06T07:08:09.000Z', body: Buffer.from(''), big: 0 })
        .execute();
      const rows = await db.selectFrom('boundary_probe').selectAll().orderBy('at', 'desc').execute();
      assert.deepEqual(rows, [
        { id: a, flag: true, at: '2026-05-06T07:08:09.010Z', body: 'x\u0000y', big: 2 ** 40 },
        { id: b, flag: false, at: '2026-05-06T07:08:09.000Z', body: '', big: 0 },
      ]);
    } finally {
      await db.schema.dropTable('boundary_probe').execute();
    }
  });

  test('a database with plugins still shows them every compiled query', async () => {
    const refuse: KyselyPlugin = {
      transformQuery: () => {
        throw new Error('seen by the plugin');
      },
      transformResult: async ({ result }) => result,
    };
    const id = await addUser(false, '2026-01-02T03:04:05.000Z');
    assert.ok(await users.findUserById(ctx.database.db, id)); // compiled and cached first
    await assert.rejects(users.findUserById(ctx.database.db.withPlugin(refuse), id), /seen by the plugin/);
    await assert.rejects(
      ctx.database.db
        .withPlugin(refuse)
        .transaction()
        .execute((trx) => users.findUserById(trx, id)),
      /seen by the plugin/,
    );
  });

  test('a query compiled once runs with different arguments, a parameter used twice included', async () => {
    const twice = compiled((db, p: { a: number; b: number }) =>
      db.selectNoFrom([
        sql<number>`cast(${p.a} as integer) + cast(${p.a} as integer) + cast(${p.b} as integer)`.as('sum'),
      ]),
    );
    assert.equal(Number((await twice.takeFirst(ctx.database.db, { a: 1, b: 10 }))?.sum), 12);
    assert.equal(Number((await twice.takeFirst(ctx.database.db, { a: 5, b: 0 }))?.sum), 10);
  });
});

test('PostgreSQL text values parse to the app forms in any session time zone', () => {
  assert.equal(parseTimestamptz('2026-11-22 23:14:45.12+00'), '2026-11-22T23:14:45.120Z');
  assert.equal(parseTimestamptz('2026-11-22 23:14:45+00'), '2026-11-22T23:14:45.000Z');
  assert.equal(parseTimestamptz('2026-11-22 23:14:45.999+00'), '2026-11-22T23:14:45.999Z');
  assert.equal(parseTimestamptz('2026-11-23 04:44:45.123+05:30'), '2026-11-22T23:14:45.123Z');
  assert.equal(parseTimestamptz('2026-11-22 18:14:45-05'), '2026-11-22T23:14:45.000Z');
  assert.equal(parseInt8('9007199254740991'), 9007199254740991);
  assert.equal(parseInt8('9007199254740993'), '9007199254740993');
  assert.equal(parseBytea('\\x00f09fa68a'), '\u0000🦊');
});
