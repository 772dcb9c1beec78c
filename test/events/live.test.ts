import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { claims, decodeJwt, forgeToken } from '../helpers/auth.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { buildTestApp, forEachDatabase, newSession, testConfig, type Session } from '../helpers/harness.js';

/** Live changes (CONTRACT.md, "Live changes"): GET /api/events through a listening server. */
forEachDatabase('live changes', (ctx) => {
  let base = '';
  const streams: Stream[] = [];
  const open = async (token: string) => {
    const stream = await Stream.open(base, token);
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

  test('every kind of change reaches the owner and the members, and no one else', async () => {
    const owner = await newSession(ctx.app, 'liveo');
    const editor = await newSession(ctx.app, 'livee');
    const stranger = await newSession(ctx.app, 'lives');
    const [ownerStream, editorStream, strangerStream] = [
      await open(owner.accessToken),
      await open(editor.accessToken),
      await open(stranger.accessToken),
    ];
    assert.equal(ownerStream.status, 200);

    const id = (await call(owner, 'POST', '/api/notes', { title: 'Live', content: 'v1' })).json().id as string;
    assert.deepEqual((await ownerStream.next('note.created', id)).data, { id });
    await call(owner, 'POST', `/api/notes/${id}/members`, { username: editor.username, role: 'editor' });
    await ownerStream.next('share.changed', id);
    await editorStream.next('share.changed', id);

    assert.equal(
      (await call(editor, 'POST', `/api/notes/${id}/versions`, { title: 'Live', content: 'v2' })).statusCode,
      204,
    );
    for (const stream of [ownerStream, editorStream]) {
      assert.deepEqual((await stream.next('note.updated', id)).data, {
        id,
        version: 2,
        author_username: editor.username,
      });
    }
    await call(owner, 'PATCH', `/api/notes/${id}`, { pinned: true });
    await editorStream.next('note.filed', id);
    await call(owner, 'POST', `/api/notes/${id}/shares`, {});
    await editorStream.next('share.changed', id);
    await call(owner, 'DELETE', `/api/notes/${id}`);
    await editorStream.next('note.trashed', id);
    await call(owner, 'POST', `/api/trash/${id}/restore`);
    await editorStream.next('note.restored', id);
    await call(owner, 'DELETE', `/api/notes/${id}`);
    await ownerStream.next('note.trashed', id);
    await call(owner, 'DELETE', `/api/trash/${id}`);
    await editorStream.next('note.deleted', id);
    await ownerStream.next('note.deleted', id);

    // The stranger's own change arrives; nothing of the others' came before it.
    const own = (await call(stranger, 'POST', '/api/notes', { title: 'Mine' })).json().id as string;
    await strangerStream.next('note.created', own);
    assert.deepEqual(strangerStream.events, []);
  });

  test('a member who leaves is told, then hears nothing more of the note', async () => {
    const owner = await newSession(ctx.app, 'livo');
    const viewer = await newSession(ctx.app, 'livv');
    // Who hears a change is read when it is delivered: the creation must have been delivered before
    // the viewer joins, or the viewer would rightly be told of it (the owner's stream says when).
    const ownerStream = await open(owner.accessToken);
    const id = (await call(owner, 'POST', '/api/notes', { title: 'Team' })).json().id as string;
    await ownerStream.next('note.created', id);
    const stream = await open(viewer.accessToken);
    await call(owner, 'POST', `/api/notes/${id}/members`, { username: viewer.username, role: 'viewer' });
    await stream.next('share.changed', id);
    assert.equal((await call(viewer, 'DELETE', `/api/notes/${id}/members/${viewer.userId}`)).statusCode, 204);
    await stream.next('share.changed', id);
    await call(owner, 'POST', `/api/notes/${id}/versions`, { title: 'Team', content: 'after' });
    const mine = (await call(viewer, 'POST', '/api/notes', { title: 'sentinel' })).json().id as string;
    await stream.next('note.created', mine);
    assert.deepEqual(stream.events, []);
  });

  test('the stream ends when its access token expires, and a reader that never reads is cut off', async () => {
    const user = await newSession(ctx.app, 'live');
    const now = Math.floor(Date.now() / 1000);
    // The session's own jti: a stream opens only on an access token whose session is alive.
    const shortLived = forgeToken(
      claims(user.userId, 'access', { exp: now + 1, jti: decodeJwt(user.accessToken).payload.jti }),
    );
    const stream = await open(shortLived);
    await stream.until(() => stream.ended, 4000);
    assert.equal(ctx.app.liveEvents.count(user.userId), 0);

    // A raw connection that asks for the stream and then never reads from it.
    const address = ctx.app.server.address() as net.AddressInfo;
    const socket = net.connect(address.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.accessToken}\r\n\r\n`);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.once('data', () => socket.pause());
    const deadline = Date.now() + 5000;
    while (ctx.app.liveEvents.count(user.userId) === 0 && Date.now() < deadline)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ctx.app.liveEvents.count(user.userId), 1);
    const big = 'x'.repeat(6 * 1024); // under PostgreSQL's 8000-byte NOTIFY payload
    let sent = 0;
    while (ctx.app.liveEvents.count(user.userId) > 0 && sent < 20_000) {
      await ctx.app.liveEvents.publish({
        type: 'note.updated',
        data: { id: user.userId, filler: big },
        users: [user.userId],
      });
      sent++;
      if (sent % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(ctx.app.liveEvents.count(user.userId), 0, 'cut off');
    assert.ok(sent < 20_000, `cut off after ${sent} events of 6 KiB (the socket's own buffers took the rest)`);
    socket.destroy();
    await closed;
  });

  test('a comment line keeps an idle stream open, and closing the server ends every stream', async () => {
    const app = await buildTestApp(ctx.config, ctx.database, { liveTesting: { heartbeatMs: 50 } });
    const url = await listen(app);
    const user = await newSession(app, 'livh');
    const stream = await Stream.open(url, user.accessToken);
    await stream.until(() => stream.comments.includes('keep-alive'));
    const closing = app.close();
    await stream.until(() => stream.ended);
    await closing;
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  if (redisUrl !== undefined && ctx.kind === 'sqlite') {
    test('with REDIS_URL, events cross between instances through Redis (SQLite alone could not)', async () => {
      const config = {
        ...testConfig(`sqlite:${ctx.config.database.kind === 'sqlite' ? ctx.config.database.filename : ''}`),
        redisUrl,
        redisKeyPrefix: `test-${Date.now()}:`,
      };
      const [a, b] = [await buildTestApp(config, ctx.database), await buildTestApp(config, ctx.database)];
      try {
        await listen(a);
        const url = await listen(b);
        const user = await newSession(a, 'liver');
        const stream = await Stream.open(url, user.accessToken);
        const id = (
          await a.inject({ method: 'POST', url: '/api/notes', headers: user.auth, payload: { title: 'Via Redis' } })
        ).json().id as string;
        await stream.next('note.created', id, 10_000);
        stream.close();
      } finally {
        await a.close();
        await b.close();
      }
    });
  }

  if (ctx.kind === 'postgres') {
    test('two instances on one PostgreSQL: a save on one reaches a stream on the other', async () => {
      const other = await buildTestApp(ctx.config, ctx.database);
      try {
        const url = await listen(other);
        const user = await newSession(ctx.app, 'live2');
        const stream = await Stream.open(url, user.accessToken);
        // The other instance's LISTEN starts with it, unawaited: an event it passes on proves it is up.
        for (let i = 0; ; i++) {
          await ctx.app.liveEvents.publish({ type: 'note.updated', data: { id: `probe${i}` }, users: [user.userId] });
          const heard = await stream.next('note.updated', `probe${i}`, 250).then(
            () => true,
            () => false,
          );
          if (heard) break;
          assert.ok(i < 40, 'the other instance never heard the channel');
        }
        // Arrives at all; how fast is a benchmark's number (bench/events.ts), not a test's.
        const id = (await call(user, 'POST', '/api/notes', { title: 'From A' })).json().id as string;
        await stream.next('note.created', id, 10_000);
        stream.close();
      } finally {
        await other.close();
      }
    });
  }
});
