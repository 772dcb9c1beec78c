import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHistoryRetention } from '../../src/config.js';
import { pruneHistory } from '../../src/notes/retention.js';
import { download, PNG, upload } from '../attachments/support.js';
import { frozenDate } from '../helpers/clock.js';
import { bearer, newAdminSession } from '../helpers/auth.js';
import { forEachDatabase, login, signup, uniqueName } from '../helpers/harness.js';
import { notesClient } from '../notes/support.js';

const clock = frozenDate();
const DAY = 24 * 60 * 60 * 1000;

forEachDatabase('share links', (ctx) => {
  const app = () => ctx.app;
  const notes = notesClient(app);
  const newUser = async () => login(app(), (await signup(app(), uniqueName('share'))).username);
  const shared = (token: string) => app().inject({ method: 'GET', url: `/api/shared/${token}` });

  test('live and pinned links, views, no owner data, the headers; every kind of miss is the same 404', async () => {
    const owner = await newUser();
    const note = await notes.createOk(owner, { title: 'Plan', content: 'first #draft' });
    clock.tick();
    await notes.addVersionOk(owner, note.id, { title: 'Plan v2', content: 'second' });
    const make = async (body: object) => {
      const res = await app().inject({
        method: 'POST',
        url: `/api/notes/${note.id}/shares`,
        headers: owner.auth,
        payload: body,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; token: string; url: string; version: number | null; views: number };
    };
    const live = await make({});
    clock.tick();
    const pinned = await make({ version: 1 });
    assert.match(live.token, /^[A-Za-z0-9_-]{32}$/);
    assert.equal(live.url, `${ctx.config.publicUrl}/s/${live.token}`);
    assert.deepEqual([live.version, pinned.version, live.views], [null, 1, 0]);

    const read = await shared(live.token);
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers['x-robots-tag'], 'noindex');
    assert.equal(read.headers['referrer-policy'], 'no-referrer');
    assert.deepEqual(read.json(), {
      title: 'Plan v2',
      content: 'second',
      version: 2,
      updated_at: read.json().updated_at,
      tags: [],
      pinned: false,
      outdated: false,
    });
    assert.ok(!read.body.includes(owner.userId) && !read.body.includes(owner.username), 'nothing about the owner');
    assert.deepEqual((await shared(pinned.token)).json(), {
      title: 'Plan',
      content: 'first #draft',
      version: 1,
      updated_at: note.created_at,
      tags: ['draft'],
      pinned: true,
      outdated: true,
    });
    // A new save: the live link follows, the pinned one stays.
    clock.tick();
    await notes.addVersionOk(owner, note.id, { title: 'Plan v3', content: 'third' });
    assert.equal((await shared(live.token)).json().content, 'third');
    assert.equal((await shared(pinned.token)).json().content, 'first #draft');
    const list = (
      await app().inject({ method: 'GET', url: `/api/notes/${note.id}/shares`, headers: owner.auth })
    ).json() as Array<{ id: string; views: number }>;
    assert.deepEqual(
      list.map((s) => [s.id, s.views]),
      [
        [pinned.id, 2],
        [live.id, 2],
      ],
    );

    const expiring = await make({ expires_at: new Date(Date.now() + DAY).toISOString() });
    assert.equal((await shared(expiring.token)).statusCode, 200);
    clock.tick(DAY + 1);
    const misses = [await shared(expiring.token), await shared('no-such-token')];
    const later = await login(app(), owner.username); // a day on: a new access token
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/notes/${note.id}/shares/${live.id}`, headers: later.auth }))
        .statusCode,
      204,
    );
    misses.push(await shared(live.token));
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/notes/${note.id}`, headers: later.auth })).statusCode,
      204,
    );
    misses.push(await shared(pinned.token));
    for (const miss of misses) {
      assert.equal(miss.statusCode, 404);
      assert.deepEqual(miss.json(), {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'Share not found',
        code: 'share_not_found',
      });
    }
  });

  test("a disabled account's links are the same 404 as any miss, its files too; enabled again, they work", async () => {
    const admin = await newAdminSession(ctx);
    const owner = await newUser();
    const file = await upload(app(), owner, PNG, { filename: 'p.png', type: 'image/png' });
    const note = await notes.createOk(owner, { title: 'Plan', content: `![p](/api/attachments/${file.id})` });
    const res = await app().inject({
      method: 'POST',
      url: `/api/notes/${note.id}/shares`,
      headers: owner.auth,
      payload: {},
    });
    assert.equal(res.statusCode, 201, res.body);
    const { token } = res.json() as { token: string };
    const fileUrl = `/api/shared/${token}/attachments/${file.id}`;
    const setDisabled = async (disabled: boolean) => {
      const patched = await app().inject({
        method: 'PATCH',
        url: `/api/auth/admin/${owner.userId}`,
        headers: bearer(admin.accessToken),
        payload: { disabled },
      });
      assert.equal(patched.statusCode, 200, patched.body);
    };
    await setDisabled(true);
    for (const miss of [await shared(token), await app().inject({ url: fileUrl })]) {
      assert.equal(miss.statusCode, 404, miss.body);
      assert.equal(miss.json().code, 'share_not_found');
    }
    await setDisabled(false);
    assert.equal((await shared(token)).statusCode, 200);
    assert.equal((await app().inject({ url: fileUrl })).statusCode, 200);
  });

  test('only the owner manages links; bad versions and past expiry are refused', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const note = await notes.createOk(owner, { title: 'x', content: 'y' });
    const post = (session: typeof owner, body: object) =>
      app().inject({ method: 'POST', url: `/api/notes/${note.id}/shares`, headers: session.auth, payload: body });
    assert.equal((await post(stranger, {})).json().detail, 'Note not found');
    assert.equal(
      (await app().inject({ method: 'GET', url: `/api/notes/${note.id}/shares`, headers: stranger.auth })).statusCode,
      404,
    );
    assert.equal((await post(owner, { version: 9 })).json().detail, 'Version not found');
    assert.equal((await post(owner, { expires_at: new Date(Date.now() - 1000).toISOString() })).statusCode, 400);
    const link = (await post(owner, {})).json() as { id: string };
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/notes/${note.id}/shares/${link.id}`, headers: stranger.auth }))
        .statusCode,
      404,
    );
  });

  test('a link serves only the files its version links to; retention keeps a pinned version', async () => {
    const owner = await newUser();
    const picture = await upload(app(), owner, PNG, { filename: 'dot.png', type: 'image/png' });
    const secret = await upload(app(), owner, Buffer.from('not shared'));
    const note = await notes.createOk(owner, { title: 'pic', content: `![dot](/api/attachments/${picture.id})` });
    clock.tick();
    await notes.addVersionOk(owner, note.id, { title: 'pic', content: 'no picture any more' });
    const pinned = (
      await app().inject({
        method: 'POST',
        url: `/api/notes/${note.id}/shares`,
        headers: owner.auth,
        payload: { version: 1 },
      })
    ).json() as { token: string };
    const live = (
      await app().inject({ method: 'POST', url: `/api/notes/${note.id}/shares`, headers: owner.auth, payload: {} })
    ).json() as { token: string };
    const file = (token: string, id: string) =>
      app().inject({ method: 'GET', url: `/api/shared/${token}/attachments/${id}` });
    const ok = await file(pinned.token, picture.id);
    assert.equal(ok.statusCode, 200);
    assert.ok(ok.rawPayload.equals(PNG));
    assert.deepEqual(
      [ok.headers['content-type'], ok.headers['x-robots-tag'], ok.headers['content-security-policy']],
      ['image/png', 'noindex', 'sandbox'],
    );
    for (const [token, id] of [
      [live.token, picture.id],
      [pinned.token, secret.id],
    ] as const) {
      assert.equal((await file(token, id)).json().detail, 'Share not found');
    }
    clock.tick(10 * DAY);
    const later = await login(app(), owner.username);
    await notes.addVersionOk(later, note.id, { title: 'pic', content: 'third' });
    await pruneHistory(ctx.database.db, new Date(Date.now() + DAY), parseHistoryRetention('all=1d'));
    assert.equal(
      (await app().inject({ method: 'GET', url: `/api/shared/${pinned.token}` })).json().version,
      1,
      'the pinned version is kept',
    );
    const versions = (
      await app().inject({ method: 'GET', url: `/api/notes/${note.id}/versions`, headers: later.auth })
    ).json() as Array<{ version: number }>;
    assert.deepEqual(
      versions.map((v) => v.version),
      [3, 1],
      'version 2 was pruned, 1 kept for the link',
    );
    assert.equal((await download(app(), later, picture.id)).statusCode, 200);
  });
});
