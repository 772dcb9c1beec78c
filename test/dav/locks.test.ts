import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { frozenDate } from '../helpers/clock.js';
import { buildTestApp, forEachDatabase, GOOD_PASSWORD, newSession, type Session } from '../helpers/harness.js';
import { runTask } from '../../src/jobs/maintenance.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';

/** Locks and dead properties live in the database: every instance sees them, and locks run out. */
const clock = frozenDate();
const LOCK_BODY =
  '<?xml version="1.0"?><lockinfo xmlns="DAV:"><lockscope><exclusive/></lockscope><locktype><write/></locktype><owner><href>mailto:a@example.com</href></owner></lockinfo>';

forEachDatabase('WebDAV locks and properties', (ctx) => {
  let second: FastifyInstance;
  let headers: { authorization: string };
  let user: Session;
  before(async () => {
    second = await buildTestApp(ctx.config, ctx.database);
    user = await newSession(ctx.app, 'locks');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/tokens',
      headers: user.auth,
      payload: { name: 'dav', scopes: ['dav'], password: GOOD_PASSWORD },
    });
    headers = { authorization: `Basic ${Buffer.from(`${user.username}:${res.json().token}`).toString('base64')}` };
  });
  after(async () => {
    await second.close();
  });
  const on = (
    app: FastifyInstance,
    method: string,
    url: string,
    extra: Record<string, string> = {},
    payload?: string,
  ) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: { ...headers, ...extra },
      ...(payload === undefined ? {} : { payload }),
    });

  test('a lock taken through one instance holds on another, until its time-out', async () => {
    assert.equal((await on(ctx.app, 'PUT', '/dav/Shared.md', {}, 'v1')).statusCode, 201);
    const locked = await on(ctx.app, 'LOCK', '/dav/Shared.md', { timeout: 'Second-30' }, LOCK_BODY);
    assert.equal(locked.statusCode, 200, locked.body);
    const token = /^<(urn:uuid:[0-9a-f-]{36})>$/.exec(String(locked.headers['lock-token']))?.[1];
    assert.ok(token, String(locked.headers['lock-token']));
    assert.match(locked.body, /<D:timeout>Second-30<\/D:timeout>/);
    assert.match(locked.body, /<owner xmlns="DAV:"><href xmlns="DAV:">mailto:a@example.com<\/href><\/owner>/);

    assert.equal(
      (await on(second, 'PUT', '/dav/Shared.md', {}, 'v2')).statusCode,
      423,
      'the other instance sees the lock',
    );
    assert.equal((await on(second, 'LOCK', '/dav/Shared.md', {}, LOCK_BODY)).statusCode, 423);
    assert.equal((await on(second, 'PUT', '/dav/Shared.md', { if: `(<${token}>)` }, 'v2')).statusCode, 204);
    const found = await on(
      second,
      'PROPFIND',
      '/dav/Shared.md',
      { depth: '0' },
      '<propfind xmlns="DAV:"><prop><lockdiscovery/></prop></propfind>',
    );
    assert.match(found.body, new RegExp(`<D:locktoken><D:href>${token}</D:href>`));

    clock.tick(31_000);
    assert.equal((await on(second, 'PUT', '/dav/Shared.md', {}, 'v3')).statusCode, 204, 'the lock ran out');
    assert.equal(
      (await on(ctx.app, 'UNLOCK', '/dav/Shared.md', { 'lock-token': `<${token}>` })).statusCode,
      409,
      'nothing left to unlock',
    );
  });

  test('a time-out asked for is capped at an hour; Infinite too', async () => {
    await on(ctx.app, 'PUT', '/dav/Long.md', {}, 'x');
    for (const timeout of ['Second-86400', 'Infinite']) {
      const res = await on(ctx.app, 'LOCK', '/dav/Long.md', { timeout }, LOCK_BODY);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, /<D:timeout>Second-3600<\/D:timeout>/);
      const token = String(res.headers['lock-token']);
      assert.equal((await on(ctx.app, 'UNLOCK', '/dav/Long.md', { 'lock-token': token })).statusCode, 204);
    }
  });

  test('dead properties persist, follow a MOVE, and are refused all together when one is protected', async () => {
    await on(ctx.app, 'PUT', '/dav/Props.md', {}, 'x');
    const set =
      '<?xml version="1.0"?><propertyupdate xmlns="DAV:" xmlns:z="urn:zoo"><set><prop><z:animal kind="cat">Tom <b xmlns="urn:b">bold</b></z:animal></prop></set></propertyupdate>';
    const res = await on(ctx.app, 'PROPPATCH', '/dav/Props.md', {}, set);
    assert.equal(res.statusCode, 207);
    assert.match(res.body, /<animal xmlns="urn:zoo"\/><\/D:prop><D:status>HTTP\/1.1 200 OK/);
    assert.equal((await on(second, 'MOVE', '/dav/Props.md', { destination: '/dav/Moved.md' })).statusCode, 201);
    const read = await on(
      second,
      'PROPFIND',
      '/dav/Moved.md',
      { depth: '0' },
      '<propfind xmlns="DAV:"><prop><animal xmlns="urn:zoo"/></prop></propfind>',
    );
    assert.match(read.body, /<animal xmlns="urn:zoo" kind="cat">Tom <b xmlns="urn:b">bold<\/b><\/animal>/);

    const mixed =
      '<propertyupdate xmlns="DAV:"><set><prop><getetag>forged</getetag><note xmlns="urn:x">kept?</note></prop></set></propertyupdate>';
    const refused = await on(ctx.app, 'PROPPATCH', '/dav/Moved.md', {}, mixed);
    assert.equal(refused.statusCode, 207);
    assert.match(refused.body, /<D:getetag\/><\/D:prop><D:status>HTTP\/1.1 403 Forbidden/);
    assert.match(refused.body, /<note xmlns="urn:x"\/><\/D:prop><D:status>HTTP\/1.1 424 Failed Dependency/);
    const after = await on(
      ctx.app,
      'PROPFIND',
      '/dav/Moved.md',
      { depth: '0' },
      '<propfind xmlns="DAV:"><propname/></propfind>',
    );
    assert.doesNotMatch(after.body, /urn:x/, 'nothing of a refused PROPPATCH is applied');

    const many = `<propertyupdate xmlns="DAV:"><set><prop>${Array.from({ length: 201 }, (_, i) => `<p${i} xmlns="urn:x">v</p${i}>`).join('')}</prop></set></propertyupdate>`;
    assert.equal((await on(ctx.app, 'PROPPATCH', '/dav/Moved.md', {}, many)).statusCode, 400);
  });

  test("properties of a note purged from the trash, or a folder deleted, through the API go with the hourly job; a trashed note's stay", async () => {
    const propName = '<propfind xmlns="DAV:"><propname/></propfind>';
    const set =
      '<propertyupdate xmlns="DAV:"><set><prop><colour xmlns="urn:y">red</colour></prop></set></propertyupdate>';
    for (const path of ['/dav/Purged.md', '/dav/Trashed.md']) {
      assert.equal((await on(ctx.app, 'PUT', path, {}, 'x')).statusCode, 201);
      assert.equal((await on(ctx.app, 'PROPPATCH', path, {}, set)).statusCode, 207);
    }
    assert.equal((await on(ctx.app, 'MKCOL', '/dav/Gone')).statusCode, 201);
    assert.equal((await on(ctx.app, 'PROPPATCH', '/dav/Gone', {}, set)).statusCode, 207);
    assert.equal((await on(ctx.app, 'PROPPATCH', '/dav/', {}, set)).statusCode, 207);
    const noteId = async (title: string) =>
      ctx.app
        .inject({ method: 'GET', url: '/api/notes', headers: user.auth })
        .then((r) => (r.json() as Array<{ id: string; title: string }>).find((n) => n.title === title)!.id);
    const purged = await noteId('Purged');
    const trashed = await noteId('Trashed');
    const folders = (await ctx.app.inject({ method: 'GET', url: '/api/folders', headers: user.auth })).json() as Array<{
      id: string;
      name: string;
    }>;
    const gone = folders.find((f) => f.name === 'Gone')!.id;
    for (const id of [purged, trashed])
      assert.equal(
        (await ctx.app.inject({ method: 'DELETE', url: `/api/notes/${id}`, headers: user.auth })).statusCode,
        204,
      );
    assert.equal(
      (await ctx.app.inject({ method: 'DELETE', url: `/api/trash/${purged}`, headers: user.auth })).statusCode,
      204,
    );
    assert.equal(
      (await ctx.app.inject({ method: 'DELETE', url: `/api/folders/${gone}`, headers: user.auth })).statusCode,
      204,
    );
    const rows = () =>
      ctx.database.db
        .selectFrom('dav_properties')
        .select('resource_id')
        .where('owner_id', '=', user.userId)
        .execute()
        .then((r) => r.map((x) => x.resource_id).sort());
    const before = await rows();
    for (const id of [purged, trashed, gone, user.userId]) assert.ok(before.includes(id));

    const task = maintenanceTasks(ctx.config).find((t) => t.name === 'dav-properties')!;
    const outcome = await runTask(ctx.database, task, new Date());
    assert.deepEqual(outcome.status === 'done' && outcome.counts, { properties: 2 });
    assert.deepEqual(
      await rows(),
      before.filter((id) => id !== purged && id !== gone),
    );
    // Restored from the trash, the note has its property again.
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url: `/api/trash/${trashed}/restore`, headers: user.auth })).statusCode,
      200,
    );
    assert.match(
      (await on(ctx.app, 'PROPFIND', '/dav/Trashed.md', { depth: '0' }, propName)).body,
      /<colour xmlns="urn:y"\/>/,
    );
  });
});
