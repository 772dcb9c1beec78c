import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { forEachDatabase, GOOD_PASSWORD, newSession, problemOf, type Session } from '../helpers/harness.js';

/** Notes shared with people (CONTRACT.md, "Sharing", People): the role matrix, authorship, leaving, ending. */
type Who = 'owner' | 'editor' | 'viewer' | 'stranger';

forEachDatabase('notes shared with people', (ctx) => {
  const app = () => ctx.app;
  const call = (who: Session, method: string, url: string, payload?: object, headers: Record<string, string> = {}) =>
    app().inject({
      method: method as 'GET',
      url,
      headers: { ...who.auth, ...headers },
      ...(payload === undefined ? {} : { payload }),
    });

  async function setUp() {
    const people = {
      owner: await newSession(app(), 'own'),
      editor: await newSession(app(), 'edi'),
      viewer: await newSession(app(), 'vie'),
      stranger: await newSession(app(), 'str'),
    } satisfies Record<Who, Session>;
    const created = await call(people.owner, 'POST', '/api/notes', { title: 'Plan', content: 'v1' });
    const id: string = created.json().id;
    for (const [who, role] of [
      ['editor', 'editor'],
      ['viewer', 'viewer'],
    ] as const) {
      const res = await call(people.owner, 'POST', `/api/notes/${id}/members`, {
        username: people[who].username.toUpperCase(),
        role,
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(Object.keys(res.json()).sort(), ['created_at', 'role', 'user_id', 'username']);
      assert.deepEqual([res.json().user_id, res.json().role], [people[who].userId, role]);
    }
    return { people, id };
  }
  const statusOf = (res: LightMyRequestResponse) => res.statusCode;

  test('every note route answers each role as the contract says: members 403 where the owner acts alone, strangers 404', async () => {
    const { people, id } = await setUp();
    const v1 = (await call(people.owner, 'GET', `/api/notes/${id}/versions`)).json()[0].id;
    const expect: Array<[string, string, object | undefined, Record<Who, number>]> = [
      ['GET', `/api/notes/${id}`, undefined, { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      ['GET', `/api/notes/${id}/versions`, undefined, { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      ['GET', `/api/notes/${id}/${v1}`, undefined, { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      ['GET', `/api/notes/${id}/diff`, undefined, { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      ['GET', `/api/notes/${id}/members`, undefined, { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      [
        'POST',
        `/api/notes/${id}/versions`,
        { title: 'Plan', content: 'by someone' },
        { owner: 204, editor: 204, viewer: 403, stranger: 404 },
      ],
      ['POST', `/api/notes/${id}/restore`, { version: 1 }, { owner: 201, editor: 201, viewer: 403, stranger: 404 }],
      ['PATCH', `/api/notes/${id}/${v1}`, { label: 'first' }, { owner: 200, editor: 200, viewer: 403, stranger: 404 }],
      ['PATCH', `/api/notes/${id}`, { pinned: true }, { owner: 200, editor: 403, viewer: 403, stranger: 404 }],
      ['GET', `/api/notes/${id}/shares`, undefined, { owner: 200, editor: 403, viewer: 403, stranger: 404 }],
      ['POST', `/api/notes/${id}/shares`, {}, { owner: 201, editor: 403, viewer: 403, stranger: 404 }],
      [
        'PATCH',
        `/api/notes/${id}/members/${people.viewer.userId}`,
        { role: 'viewer' },
        { owner: 200, editor: 403, viewer: 403, stranger: 404 },
      ],
      ['DELETE', `/api/notes/${id}`, undefined, { owner: 204, editor: 403, viewer: 403, stranger: 404 }],
    ];
    for (const [method, url, body, statuses] of expect) {
      for (const who of ['stranger', 'viewer', 'editor', 'owner'] as const) {
        const res = await call(people[who], method, url, body);
        assert.equal(statusOf(res), statuses[who], `${who} ${method} ${url}: ${res.body}`);
        if (res.statusCode === 403) assert.equal(problemOf(res).detail, 'Forbidden');
        if (res.statusCode === 404) assert.equal(problemOf(res).detail, 'Note not found');
      }
    }
    // The owner's DELETE sent it to the trash: access ended for everyone.
    for (const who of ['editor', 'viewer'] as const)
      assert.equal(statusOf(await call(people[who], 'GET', `/api/notes/${id}`)), 404);
    // The owner's own note is settled without a look-up once known; in the trash it is still 404 everywhere.
    for (const [method, url] of [
      ['GET', `/api/notes/${id}`],
      ['GET', `/api/notes/${id}/members`],
      ['GET', `/api/notes/${id}/shares`],
    ] as const) {
      assert.equal(statusOf(await call(people.owner, method, url)), 404, url);
    }
    assert.equal(
      statusOf(
        await call(people.owner, 'POST', `/api/notes/${id}/members`, {
          username: people.stranger.username,
          role: 'viewer',
        }),
      ),
      404,
    );
    assert.deepEqual((await call(people.editor, 'GET', '/api/notes/shared')).json(), []);
  });

  test('each version records its author; an editor saves with If-Match like the owner (412 when stale)', async () => {
    const { people, id } = await setUp();
    assert.equal(
      statusOf(
        await call(
          people.editor,
          'POST',
          `/api/notes/${id}/versions`,
          { title: 'Plan', content: 'v2 by the editor' },
          { 'if-match': '"1"' },
        ),
      ),
      204,
    );
    const stale = await call(
      people.owner,
      'POST',
      `/api/notes/${id}/versions`,
      { title: 'Plan', content: 'v2 by the owner' },
      { 'if-match': '"1"' },
    );
    assert.equal(stale.statusCode, 412);
    assert.equal(stale.headers.etag, '"2"');
    const history = (await call(people.viewer, 'GET', `/api/notes/${id}/versions`)).json();
    assert.deepEqual(
      history.map((v: { version: number; author_username: string }) => [v.version, v.author_username]),
      [
        [2, people.editor.username],
        [1, people.owner.username],
      ],
    );
    const version = (await call(people.viewer, 'GET', `/api/notes/${id}/${history[0].id}`)).json();
    assert.equal(version.author_username, people.editor.username);
    const note = (await call(people.editor, 'GET', `/api/notes/${id}`)).json();
    assert.deepEqual([note.owner_id, note.content], [people.owner.userId, 'v2 by the editor']);
  });

  test('"Shared with me" lists the note with its owner and role; leaving, removal and account deletion end access at once', async () => {
    const { people, id } = await setUp();
    const shared = (await call(people.viewer, 'GET', '/api/notes/shared')).json();
    assert.equal(shared.length, 1);
    assert.deepEqual(
      [shared[0].id, shared[0].title, shared[0].owner_username, shared[0].role, shared[0].preview],
      [id, 'Plan', people.owner.username, 'viewer', 'v1'],
    );
    assert.deepEqual(
      (await call(people.viewer, 'GET', '/api/notes')).json(),
      [],
      "the caller's own list is their own notes",
    );

    assert.equal(
      statusOf(await call(people.viewer, 'DELETE', `/api/notes/${id}/members/${people.editor.userId}`)),
      403,
      'a member removes only themselves',
    );
    assert.equal(
      statusOf(await call(people.viewer, 'DELETE', `/api/notes/${id}/members/${people.viewer.userId}`)),
      204,
      'leaving',
    );
    assert.equal(statusOf(await call(people.viewer, 'GET', `/api/notes/${id}`)), 404);
    assert.equal(statusOf(await call(people.owner, 'DELETE', `/api/notes/${id}/members/${people.editor.userId}`)), 204);
    assert.equal(
      statusOf(await call(people.editor, 'POST', `/api/notes/${id}/versions`, { title: 'x', content: 'y' })),
      404,
    );

    const again = await call(people.owner, 'POST', `/api/notes/${id}/members`, {
      username: people.editor.username,
      role: 'editor',
    });
    assert.equal(again.statusCode, 201);
    assert.equal(
      (
        await call(people.owner, 'POST', `/api/notes/${id}/members`, {
          username: people.editor.username,
          role: 'viewer',
        })
      ).statusCode,
      409,
    );
    assert.equal(
      (
        await call(people.owner, 'POST', `/api/notes/${id}/members`, {
          username: people.owner.username,
          role: 'viewer',
        })
      ).statusCode,
      409,
    );
    const unknown = await call(people.owner, 'POST', `/api/notes/${id}/members`, {
      username: 'nobody-here-at-all',
      role: 'viewer',
    });
    assert.equal(problemOf(unknown).detail, 'User not found');
    const hostile = await call(people.owner, 'POST', `/api/notes/${id}/members`, {
      username: 'a\u0000b\ud800',
      role: 'viewer',
    });
    assert.equal(problemOf(hostile).detail, 'User not found', 'a name no account can have is looked up nowhere');
    assert.equal(
      (
        await call(people.owner, 'POST', `/api/notes/${id}/members`, {
          username: people.viewer.username,
          role: 'admin',
        })
      ).statusCode,
      400,
    );

    await call(people.editor, 'POST', `/api/notes/${id}/versions`, {
      title: 'Plan',
      content: 'written before leaving for good',
    });
    const gone = await call(people.editor, 'DELETE', '/api/auth/owner', { password: GOOD_PASSWORD });
    assert.equal(gone.statusCode, 204, gone.body);
    assert.deepEqual((await call(people.owner, 'GET', `/api/notes/${id}/members`)).json(), []);
    assert.equal(
      (await call(people.owner, 'GET', `/api/notes/${id}/versions`)).json()[0].author_username,
      null,
      'a deleted author is no one',
    );
  });

  test('search finds notes shared with the caller, and stops finding them when access ends', async () => {
    const { people, id } = await setUp();
    await call(people.owner, 'POST', `/api/notes/${id}/versions`, {
      title: 'Plan',
      content: 'the zeppelin itinerary #travel',
    });
    await call(people.owner, 'POST', '/api/notes', { title: 'Private', content: 'another zeppelin, not shared' });
    await call(people.viewer, 'POST', '/api/notes', { title: 'Mine', content: 'my own zeppelin' });
    const search = async (who: Session, q: string, extra = '') =>
      (
        (await call(who, 'GET', `/api/notes/search?q=${encodeURIComponent(q)}${extra}`)).json() as Array<{
          id: string;
          title: string;
        }>
      )
        .map((r) => r.title)
        .sort();
    assert.deepEqual(await search(people.viewer, 'zeppelin'), ['Mine', 'Plan']);
    assert.deepEqual(await search(people.viewer, 'zeppelin', '&history=true'), ['Mine', 'Plan']);
    assert.deepEqual(await search(people.viewer, 'tag:travel'), ['Plan']);
    assert.deepEqual(await search(people.stranger, 'zeppelin'), []);
    assert.deepEqual(await search(people.owner, 'zeppelin'), ['Plan', 'Private']);
    await call(people.owner, 'DELETE', `/api/notes/${id}/members/${people.viewer.userId}`);
    assert.deepEqual(await search(people.viewer, 'zeppelin'), ['Mine']);
  });

  test("members see the files the note links to, and nothing else of the owner's", async () => {
    const { people, id } = await setUp();
    const upload = async (bytes: string) => {
      const boundary = 'xyz';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\n${bytes}\r\n--${boundary}--\r\n`;
      const res = await app().inject({
        method: 'POST',
        url: '/api/attachments',
        headers: { ...people.owner.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: body,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const linked = await upload('linked bytes');
    const other = await upload('private bytes');
    await call(people.owner, 'POST', `/api/notes/${id}/versions`, {
      title: 'Plan',
      content: `[file](/api/attachments/${linked})`,
    });
    assert.equal((await call(people.viewer, 'GET', `/api/attachments/${linked}`)).body, 'linked bytes');
    assert.equal(statusOf(await call(people.viewer, 'GET', `/api/attachments/${other}`)), 404);
    assert.equal(statusOf(await call(people.stranger, 'GET', `/api/attachments/${linked}`)), 404);

    // An editor who learned the id of another of the owner's files cannot link it into the note:
    // their version keeps the text, but the file stays the owner's alone (no member reads it, no
    // share link serves it, the owner may still delete it).
    const saved = await call(people.editor, 'POST', `/api/notes/${id}/versions`, {
      title: 'Plan',
      content: `[file](/api/attachments/${linked}) [mine now](/api/attachments/${other})`,
    });
    assert.equal(saved.statusCode, 204, saved.body);
    for (const who of ['viewer', 'editor'] as const)
      assert.equal(statusOf(await call(people[who], 'GET', `/api/attachments/${other}`)), 404, who);
    assert.equal((await call(people.viewer, 'GET', `/api/attachments/${linked}`)).body, 'linked bytes');
    const share = await call(people.owner, 'POST', `/api/notes/${id}/shares`, {});
    assert.equal(share.statusCode, 201, share.body);
    const token = share.json().token as string;
    const publicFile = await app().inject({ url: `/api/shared/${token}/attachments/${other}` });
    assert.equal(publicFile.statusCode, 404, publicFile.body);
    assert.equal(statusOf(await call(people.owner, 'DELETE', `/api/attachments/${other}`)), 204);
    // Once the owner's own version links it, it is the note's like any other.
    const third = await upload('later bytes');
    await call(people.owner, 'POST', `/api/notes/${id}/versions`, {
      title: 'Plan',
      content: `[file](/api/attachments/${third})`,
    });
    await call(people.editor, 'POST', `/api/notes/${id}/versions`, {
      title: 'Plan',
      content: `edited [file](/api/attachments/${third})`,
    });
    // The share link serves the files the current version (the editor's) links to.
    const sharedThird = await app().inject({ url: `/api/shared/${token}/attachments/${third}` });
    assert.equal(sharedThird.statusCode, 200, sharedThird.body);
    assert.equal(sharedThird.body, 'later bytes');
  });
});
