import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { collectGarbage } from '../../src/attachments/attachments.service.js';
import { createStorage } from '../../src/attachments/create-storage.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, GOOD_PASSWORD, newSession, problemOf, type Session } from '../helpers/harness.js';

/** WebDAV as the contract maps it (CONTRACT.md, "WebDAV"), driven through HTTP on both databases. */
const DAY_MS = 24 * 60 * 60 * 1000;
const BASIC_CHALLENGE = 'Basic realm="Vellum", charset="UTF-8"';

interface DavUser extends Session {
  basic: { authorization: string };
}

// Listings go oldest first (clashing names numbered in that order): each create gets its own millisecond.
const clock = frozenDate();

forEachDatabase('WebDAV mapping', (ctx) => {
  const app = () => ctx.app;

  async function tokenFor(user: Session, scopes: string[]): Promise<string> {
    const res = await app().inject({
      method: 'POST',
      url: '/api/auth/tokens',
      headers: user.auth,
      payload: { name: 'dav', scopes, password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().token;
  }
  const basic = (username: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${username}:${secret}`).toString('base64')}`,
  });
  async function newUser(): Promise<DavUser> {
    const user = await newSession(app(), 'dav');
    return { ...user, basic: basic(user.username, await tokenFor(user, ['dav'])) };
  }
  const dav = (
    user: DavUser,
    method: string,
    url: string,
    headers: Record<string, string> = {},
    payload?: string | Buffer,
  ) =>
    app().inject({
      method: method as 'GET',
      url,
      headers: { ...user.basic, ...headers },
      ...(payload === undefined ? {} : { payload }),
    });
  const api = (user: Session, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    app().inject({ method, url, headers: user.auth, ...(payload === undefined ? {} : { payload }) });
  async function note(user: Session, body: object): Promise<{ id: string; version: number }> {
    const res = await api(user, 'POST', '/api/notes', body);
    assert.equal(res.statusCode, 201, res.body);
    clock.tick();
    return res.json();
  }
  async function folder(user: Session, name: string, parentId: string | null = null): Promise<string> {
    const res = await api(user, 'POST', '/api/folders', { name, parent_id: parentId });
    assert.equal(res.statusCode, 201, res.body);
    clock.tick();
    return res.json().id;
  }
  /** The hrefs of a Depth: 1 PROPFIND, and the multistatus itself. */
  async function listing(user: DavUser, url: string): Promise<{ hrefs: string[]; body: string }> {
    const res = await dav(user, 'PROPFIND', url, { depth: '1' });
    assert.equal(res.statusCode, 207, res.body);
    assert.match(String(res.headers['content-type']), /^application\/xml; charset=utf-8$/);
    return { hrefs: [...res.body.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!), body: res.body };
  }
  const statusOf = (res: LightMyRequestResponse, status: number) => assert.equal(res.statusCode, status, res.body);

  test('credentials: Basic with a dav token (never the password), or a bearer token; OPTIONS goes without', async () => {
    const user = await newUser();
    const options = await app().inject({ method: 'OPTIONS', url: '/dav/' });
    statusOf(options, 200);
    assert.equal(options.headers.dav, '1, 2');
    assert.match(String(options.headers.allow), /PROPFIND.*LOCK/);
    assert.doesNotMatch(JSON.stringify(options.headers), /nextcloud|sabre|oc-/i, 'no vendor extension is advertised');

    const refusals = [
      {},
      basic(user.username, GOOD_PASSWORD),
      basic(user.username, await tokenFor(user, ['notes:read', 'notes:write'])),
      basic('someone-else', user.basic.authorization),
      { authorization: 'Basic !!!' },
      { authorization: `Bearer ${await tokenFor(user, ['notes:read'])}` },
    ];
    for (const headers of refusals) {
      const res = await app().inject({ method: 'PROPFIND', url: '/dav/', headers: { depth: '0', ...headers } });
      statusOf(res, 401);
      assert.equal(res.headers['www-authenticate'], BASIC_CHALLENGE);
      assert.equal(problemOf(res).detail, 'Unauthorized');
    }
    const otherName = basic(
      `${user.username}x`,
      Buffer.from(user.basic.authorization.slice(6), 'base64').toString().split(':')[1]!,
    );
    statusOf(await app().inject({ method: 'PROPFIND', url: '/dav/', headers: { depth: '0', ...otherName } }), 401);
    statusOf(await dav(user, 'PROPFIND', '/dav/', { depth: '0' }), 207);
    statusOf(await dav(user, 'PROPFIND', '/dav/', { depth: '0', ...user.auth }), 207);
    statusOf(
      await app().inject({
        method: 'PROPFIND',
        url: '/dav/',
        headers: { depth: '0', authorization: `Bearer ${await tokenFor(user, ['dav'])}` },
      }),
      207,
    );
  });

  test('names: notes are {title}.md, characters a file cannot hold replaced, clashes numbered; folders are collections', async () => {
    const user = await newUser();
    const work = await folder(user, 'Work');
    const first = await note(user, { title: 'Plans', content: 'one' });
    await note(user, { title: 'plans', content: 'two' });
    await note(user, { title: 'a/b\\c', content: 'slashes' });
    await note(user, { title: '', content: 'no title' });
    await note(user, { title: 'Work', content: 'a note named like a folder' });
    await note(user, { title: 'Inside', content: 'filed', folder_id: work });
    const { hrefs, body } = await listing(user, '/dav/');
    assert.deepEqual(hrefs, [
      '/dav/',
      '/dav/Work/',
      '/dav/Plans.md',
      '/dav/plans%20(2).md',
      '/dav/a_b_c.md',
      '/dav/Untitled.md',
      '/dav/Work.md',
    ]);
    assert.equal(body.match(/<D:getlastmodified>/g)?.length, hrefs.length, 'every resource has getlastmodified');
    assert.equal(body.match(/<D:collection\/>/g)?.length, 2);
    assert.deepEqual((await listing(user, '/dav/Work/')).hrefs, ['/dav/Work/', '/dav/Work/Inside.md']);
    const relative = await dav(
      user,
      'PROPFIND',
      '/dav/plans%20(2).md',
      { depth: '0' },
      '<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getetag/><getcontentlength/><nope xmlns="urn:x"/></prop></propfind>',
    );
    statusOf(relative, 207);
    assert.match(relative.body, /<D:getcontentlength>3<\/D:getcontentlength>/);
    assert.match(relative.body, /<nope xmlns="urn:x"\/><\/D:prop><D:status>HTTP\/1.1 404 Not Found/);
    const got = await dav(user, 'GET', '/dav/PLANS.md');
    statusOf(got, 200);
    assert.equal(got.body, 'one', "names are matched ignoring case, as on the clients' disks");
    assert.equal(got.headers.etag, `"${(await api(user, 'GET', `/api/notes/${first.id}`)).json().version_id}"`);
    for (const depth of [undefined, 'infinity']) {
      const res = await dav(user, 'PROPFIND', '/dav/', depth === undefined ? {} : { depth });
      statusOf(res, 403);
    }
    statusOf(await dav(user, 'MKCOL', '/dav/Work/'), 405);
    statusOf(await dav(user, 'MKCOL', '/dav/Nope/Deeper/'), 409);
    statusOf(await dav(user, 'MKCOL', '/dav/bad%3Aname/'), 403);
    statusOf(await dav(user, 'GET', '/dav/missing.md'), 404);
  });

  test('GET is byte for byte what PUT wrote; an identical PUT adds no version; If-Match and If-None-Match by the RFC', async () => {
    const user = await newUser();
    const text = Buffer.from('\ufeff# Title\r\nline with NUL \0 and é\n', 'utf8');
    const created = await dav(user, 'PUT', '/dav/Exact.md', { 'content-type': 'text/markdown' }, text);
    statusOf(created, 201);
    const got = await dav(user, 'GET', '/dav/Exact.md');
    assert.ok(got.rawPayload.equals(text));
    assert.equal(got.headers['content-type'], 'text/markdown; charset=utf-8');
    assert.ok(got.headers['last-modified']);
    const etag = String(got.headers.etag);
    assert.equal(created.headers.etag, etag);
    const [row] = (await api(user, 'GET', '/api/notes')).json();
    assert.equal(row.title, 'Exact');

    statusOf(await dav(user, 'PUT', '/dav/Exact.md', {}, text), 204);
    assert.equal((await api(user, 'GET', `/api/notes/${row.id}`)).json().version, 1, 'no version for the same bytes');
    statusOf(await dav(user, 'GET', '/dav/Exact.md', { 'if-none-match': '"made-up-by-a-client"' }), 200);
    statusOf(await dav(user, 'GET', '/dav/Exact.md', { 'if-none-match': etag }), 304);
    statusOf(await dav(user, 'PUT', '/dav/Exact.md', { 'if-none-match': '*' }, 'x'), 412);
    statusOf(await dav(user, 'PUT', '/dav/Exact.md', { 'if-none-match': '"made-up"' }, 'second'), 204);
    statusOf(await dav(user, 'PUT', '/dav/Exact.md', { 'if-match': etag }, 'stale'), 412);
    const now = String((await dav(user, 'GET', '/dav/Exact.md')).headers.etag);
    statusOf(await dav(user, 'PUT', '/dav/Exact.md', { 'if-match': now }, 'third'), 204);
    const current = (await api(user, 'GET', `/api/notes/${row.id}`)).json();
    assert.deepEqual([current.version, current.content], [3, 'third']);
    const history = (await api(user, 'GET', `/api/notes/${row.id}/versions`)).json();
    assert.deepEqual(
      history.map((v: { version: number }) => v.version),
      [3, 2, 1],
      'the overwritten text stays in the history',
    );

    const notUtf8 = await dav(user, 'PUT', '/dav/Binary.md', {}, Buffer.from([0xff, 0xfe, 0x00]));
    statusOf(notUtf8, 415);
    statusOf(await dav(user, 'PUT', '/dav/Big.md', {}, Buffer.alloc(1024 * 1024 + 1, 'a')), 413);
    statusOf(await dav(user, 'PUT', '/dav/No/Folder.md', {}, 'x'), 409);
    statusOf(await dav(user, 'PUT', `/dav/${'t'.repeat(201)}.md`, {}, 'x'), 400);
  });

  test('other files are attachments placed at their path: listed, kept by the clean-up, gone with DELETE', async () => {
    const user = await newUser();
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(5000, 1)]);
    statusOf(await dav(user, 'MKCOL', '/dav/Pictures'), 201);
    statusOf(await dav(user, 'PUT', '/dav/Pictures/cat.png', {}, png), 201);
    statusOf(await dav(user, 'PUT', '/dav/Pictures/notes.MD', {}, 'not a note: .md is lower case'), 201);
    const got = await dav(user, 'GET', '/dav/Pictures/cat.png');
    assert.ok(got.rawPayload.equals(png));
    assert.equal(got.headers['content-type'], 'image/png');
    const files = (await api(user, 'GET', '/api/attachments')).json();
    assert.deepEqual(files.map((f: { filename: string }) => f.filename).sort(), ['cat.png', 'notes.MD']);
    assert.equal((await api(user, 'GET', '/api/notes')).json().length, 0);

    await collectGarbage(
      ctx.database.db,
      createStorage(ctx.config, ctx.database.db),
      new Date(Date.now() + 2 * DAY_MS),
    );
    assert.ok((await dav(user, 'GET', '/dav/Pictures/cat.png')).rawPayload.equals(png), 'a placed file is in use');

    statusOf(await dav(user, 'PUT', '/dav/Pictures/cat.png', {}, Buffer.from('replaced')), 204);
    assert.equal((await dav(user, 'GET', '/dav/Pictures/cat.png')).body, 'replaced');
    assert.equal((await api(user, 'GET', '/api/attachments')).json().length, 2, 'the replaced bytes are not kept');
    statusOf(await dav(user, 'DELETE', '/dav/Pictures/cat.png'), 204);
    statusOf(await dav(user, 'GET', '/dav/Pictures/cat.png'), 404);
    assert.deepEqual(
      (await api(user, 'GET', '/api/attachments')).json().map((f: { filename: string }) => f.filename),
      ['notes.MD'],
    );
  });

  test("MOVE keeps a note's id and history (a new name is a new title); DELETE sends notes to the trash", async () => {
    const user = await newUser();
    const a = await folder(user, 'A');
    const b = await folder(user, 'B');
    const moved = await note(user, { title: 'Draft', content: 'text', folder_id: a });
    const origin = 'http://localhost';
    statusOf(await dav(user, 'MOVE', '/dav/A/Draft.md', { destination: `${origin}/dav/B/Draft.md` }), 201);
    let now = (await api(user, 'GET', `/api/notes/${moved.id}`)).json();
    assert.deepEqual([now.folder_id, now.version, now.title], [b, 1, 'Draft'], 'a move alone is no new version');
    statusOf(await dav(user, 'MOVE', '/dav/B/Draft.md', { destination: '/dav/Final%20text.md' }), 201);
    now = (await api(user, 'GET', `/api/notes/${moved.id}`)).json();
    assert.deepEqual([now.folder_id, now.version, now.title, now.content], [null, 2, 'Final text', 'text']);

    await note(user, { title: 'Other', content: 'in the way' });
    statusOf(await dav(user, 'MOVE', '/dav/Final%20text.md', { destination: '/dav/Other.md', overwrite: 'F' }), 412);
    statusOf(await dav(user, 'MOVE', '/dav/Final%20text.md', { destination: '/dav/Other.md' }), 204);
    now = (await api(user, 'GET', `/api/notes/${moved.id}`)).json();
    assert.equal(now.title, 'Other');
    const trash = (await api(user, 'GET', '/api/trash')).json();
    assert.deepEqual(
      trash.map((t: { title: string }) => t.title),
      ['Other'],
      'the overwritten note went to the trash',
    );

    statusOf(await dav(user, 'COPY', '/dav/Other.md', { destination: '/dav/B/Copy.md' }), 201);
    const titles = (await api(user, 'GET', '/api/notes'))
      .json()
      .map((n: { title: string }) => n.title)
      .sort();
    assert.deepEqual(titles, ['Copy', 'Other']);
    statusOf(await dav(user, 'MOVE', '/dav/B/', { destination: '/dav/A/B/' }), 201);
    assert.deepEqual((await listing(user, '/dav/A/B/')).hrefs, ['/dav/A/B/', '/dav/A/B/Copy.md']);
    statusOf(await dav(user, 'MOVE', '/dav/A/', { destination: '/dav/A/B/A/' }), 403);

    statusOf(await dav(user, 'DELETE', '/dav/A/'), 204);
    const trashed = (await api(user, 'GET', '/api/trash'))
      .json()
      .map((t: { title: string }) => t.title)
      .sort();
    assert.deepEqual(trashed, ['Copy', 'Other']);
    const copyId = (await api(user, 'GET', '/api/trash')).json().find((t: { title: string }) => t.title === 'Copy').id;
    statusOf(await api(user, 'POST', `/api/trash/${copyId}/restore`), 200);
    assert.ok(
      (await listing(user, '/dav/')).hrefs.includes('/dav/Copy.md'),
      'restored to the top level, its folder being gone',
    );
  });

  test('a user sees only their own tree; a malformed path or XML is a 400, never a 500', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    await note(owner, { title: 'Private', content: 'mine' });
    statusOf(await dav(stranger, 'GET', '/dav/Private.md'), 404);
    assert.deepEqual((await listing(stranger, '/dav/')).hrefs, ['/dav/']);
    statusOf(await dav(owner, 'GET', '/dav/%E0%A4%A'), 400);
    statusOf(await dav(owner, 'GET', '/dav/a%2FPrivate.md'), 400); // (dot segments: light-my-request resolves them, so clients.test.ts sends them raw)
    statusOf(await dav(owner, 'PROPFIND', '/dav/', { depth: '0' }, '<propfind xmlns="DAV:"><prop>'), 400);
    statusOf(
      await dav(
        owner,
        'PROPFIND',
        '/dav/',
        { depth: '0' },
        '<!DOCTYPE x [<!ENTITY a "aaaa">]><propfind xmlns="DAV:"><allprop/></propfind>',
      ),
      400,
    );
    statusOf(await dav(owner, 'PROPFIND', '/dav/', { depth: '0' }, `${'<a>'.repeat(100)}${'</a>'.repeat(100)}`), 400);
    statusOf(await dav(owner, 'PUT', '/dav/Private.md', { if: '(<broken' }, 'x'), 400);
    statusOf(await dav(owner, 'COPY', '/dav/Private.md'), 400);
  });
});
