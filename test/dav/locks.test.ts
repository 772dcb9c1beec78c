import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { frozenDate } from '../helpers/clock.js';
import { buildTestApp, forEachDatabase, GOOD_PASSWORD, newSession } from '../helpers/harness.js';

/** Locks and dead properties live in the database: every instance sees them, and locks run out. */
const clock = frozenDate();
const LOCK_BODY = '<?xml version="1.0"?><lockinfo xmlns="DAV:"><lockscope><exclusive/></lockscope><locktype><write/></locktype><owner><href>mailto:a@example.com</href></owner></lockinfo>';

forEachDatabase('WebDAV locks and properties', (ctx) => {
  let second: FastifyInstance;
  let headers: { authorization: string };
  before(async () => {
    second = await buildTestApp(ctx.config, ctx.database);
    const user = await newSession(ctx.app, 'locks');
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/tokens', headers: user.auth, payload: { name: 'dav', scopes: ['dav'], password: GOOD_PASSWORD } });
    headers = { authorization: `Basic ${Buffer.from(`${user.username}:${res.json().token}`).toString('base64')}` };
  });
  after(async () => {
    await second.close();
  });
  const on = (app: FastifyInstance, method: string, url: string, extra: Record<string, string> = {}, payload?: string) =>
    app.inject({ method: method as 'GET', url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload }) });

  test('a lock taken through one instance holds on another, until its time-out', async () => {
    assert.equal((await on(ctx.app, 'PUT', '/dav/Shared.md', {}, 'v1')).statusCode, 201);
    const locked = await on(ctx.app, 'LOCK', '/dav/Shared.md', { timeout: 'Second-30' }, LOCK_BODY);
    assert.equal(locked.statusCode, 200, locked.body);
    const token = /^<(urn:uuid:[0-9a-f-]{36})>$/.exec(String(locked.headers['lock-token']))?.[1];
    assert.ok(token, String(locked.headers['lock-token']));
    assert.match(locked.body, /<D:timeout>Second-30<\/D:timeout>/);
    assert.match(locked.body, /<owner xmlns="DAV:"><href xmlns="DAV:">mailto:a@example.com<\/href><\/owner>/);

    assert.equal((await on(second, 'PUT', '/dav/Shared.md', {}, 'v2')).statusCode, 423, 'the other instance sees the lock');
    assert.equal((await on(second, 'LOCK', '/dav/Shared.md', {}, LOCK_BODY)).statusCode, 423);
    assert.equal((await on(second, 'PUT', '/dav/Shared.md', { if: `(<${token}>)` }, 'v2')).statusCode, 204);
    const found = await on(second, 'PROPFIND', '/dav/Shared.md', { depth: '0' }, '<propfind xmlns="DAV:"><prop><lockdiscovery/></prop></propfind>');
    assert.match(found.body, new RegExp(`<D:locktoken><D:href>${token}</D:href>`));

    clock.tick(31_000);
    assert.equal((await on(second, 'PUT', '/dav/Shared.md', {}, 'v3')).statusCode, 204, 'the lock ran out');
    assert.equal((await on(ctx.app, 'UNLOCK', '/dav/Shared.md', { 'lock-token': `<${token}>` })).statusCode, 409, 'nothing left to unlock');
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
    const set = '<?xml version="1.0"?><propertyupdate xmlns="DAV:" xmlns:z="urn:zoo"><set><prop><z:animal kind="cat">Tom <b xmlns="urn:b">bold</b></z:animal></prop></set></propertyupdate>';
    const res = await on(ctx.app, 'PROPPATCH', '/dav/Props.md', {}, set);
    assert.equal(res.statusCode, 207);
    assert.match(res.body, /<animal xmlns="urn:zoo"\/><\/D:prop><D:status>HTTP\/1.1 200 OK/);
    assert.equal((await on(second, 'MOVE', '/dav/Props.md', { destination: '/dav/Moved.md' })).statusCode, 201);
    const read = await on(second, 'PROPFIND', '/dav/Moved.md', { depth: '0' }, '<propfind xmlns="DAV:"><prop><animal xmlns="urn:zoo"/></prop></propfind>');
    assert.match(read.body, /<animal xmlns="urn:zoo" kind="cat">Tom <b xmlns="urn:b">bold<\/b><\/animal>/);

    const mixed = '<propertyupdate xmlns="DAV:"><set><prop><getetag>forged</getetag><note xmlns="urn:x">kept?</note></prop></set></propertyupdate>';
    const refused = await on(ctx.app, 'PROPPATCH', '/dav/Moved.md', {}, mixed);
    assert.equal(refused.statusCode, 207);
    assert.match(refused.body, /<D:getetag\/><\/D:prop><D:status>HTTP\/1.1 403 Forbidden/);
    assert.match(refused.body, /<note xmlns="urn:x"\/><\/D:prop><D:status>HTTP\/1.1 424 Failed Dependency/);
    const after = await on(ctx.app, 'PROPFIND', '/dav/Moved.md', { depth: '0' }, '<propfind xmlns="DAV:"><propname/></propfind>');
    assert.doesNotMatch(after.body, /urn:x/, 'nothing of a refused PROPPATCH is applied');

    const many = `<propertyupdate xmlns="DAV:"><set><prop>${Array.from({ length: 201 }, (_, i) => `<p${i} xmlns="urn:x">v</p${i}>`).join('')}</prop></set></propertyupdate>`;
    assert.equal((await on(ctx.app, 'PROPPATCH', '/dav/Moved.md', {}, many)).statusCode, 400);
  });
});
