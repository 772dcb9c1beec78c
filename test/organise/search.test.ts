import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectNoContent, expectProblem, MISSING_ID, okJson, type Note } from '../notes/support.js';
import { organiseClient, type Folder } from './support.js';

const clock = frozenDate();

interface Result {
  id: string;
  title: string;
  snippet: string;
  highlights: number[][];
  version?: number;
}

/** Search with folders, tags and the archive: the same answers on SQLite (FTS5) and PostgreSQL. */
forEachDatabase('search within folders, tags and the archive', (ctx) => {
  const api = organiseClient(() => ctx.app);
  const search = async (s: Session, query: string) =>
    okJson<Result[]>(await api.call(s, 'GET', `/api/notes/search?${query}`));
  const ids = async (s: Session, query: string) => new Set((await search(s, query)).map((r) => r.id));
  let s: Session;
  let work: Folder;
  let plans: Folder;
  const n: Record<string, Note> = {};

  before(async () => {
    s = await newSession(ctx.app);
    work = await api.folder(s, 'Work');
    plans = await api.folder(s, 'Plans', work.id);
    const add = async (key: string, content: string, folder?: string) => {
      clock.tick();
      n[key] = await api.note(s, content, `${key} harbor`, folder);
    };
    await add('top', 'harbor at the top #errands');
    await add('work', 'harbor meeting #project/vellum #errands', work.id);
    await add('plans', 'harbor plans #project', plans.id);
    await add('archived', 'harbor archived #project/vellum', work.id);
    await add('trashed', 'harbor trashed #project');
    await api.fileOk(s, n.archived!.id, { archived: true });
    expectNoContent(await api.call(s, 'DELETE', `/api/notes/${n.trashed!.id}`));
  });

  test('archived notes leave search; archived=true searches only them', async () => {
    assert.deepEqual(await ids(s, 'q=harbor'), new Set([n.top!.id, n.work!.id, n.plans!.id]));
    assert.deepEqual(await ids(s, 'q=harbor&archived=true'), new Set([n.archived!.id]));
    assert.deepEqual(await ids(s, 'q=harbor&history=true'), new Set([n.top!.id, n.work!.id, n.plans!.id]));
    // Unarchived, it is found again (SQLite moves it back into the current entries).
    await api.fileOk(s, n.archived!.id, { archived: false });
    assert.ok((await ids(s, 'q=archived')).has(n.archived!.id));
    await api.fileOk(s, n.archived!.id, { archived: true });
    assert.deepEqual(await ids(s, 'q=archived'), new Set());
  });

  test("folder= narrows to one folder (not its subfolders); root is the top level; another user's folder is 404", async () => {
    assert.deepEqual(await ids(s, `q=harbor&folder=${work.id}`), new Set([n.work!.id]));
    assert.deepEqual(await ids(s, `q=harbor&folder=${plans.id}`), new Set([n.plans!.id]));
    assert.deepEqual(await ids(s, 'q=harbor&folder=root'), new Set([n.top!.id]));
    assert.deepEqual(await ids(s, `q=harbor&folder=${work.id}&archived=true&history=true`), new Set([n.archived!.id]));
    expectProblem(
      await api.call(s, 'GET', `/api/notes/search?q=harbor&folder=${MISSING_ID}`),
      404,
      'Folder not found',
      'folder_not_found',
    );
    const stranger = await newSession(ctx.app);
    expectProblem(
      await api.call(stranger, 'GET', `/api/notes/search?q=harbor&folder=${work.id}`),
      404,
      'Folder not found',
      'folder_not_found',
    );
  });

  test('tag= and tag:name in q mean the same; parents count; -tag: excludes', async () => {
    const project = new Set([n.work!.id, n.plans!.id]);
    assert.deepEqual(await ids(s, 'q=harbor&tag=project'), project);
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor tag:project')}`), project);
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor TAG:#Project')}`), project);
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor tag:project/vellum')}`), new Set([n.work!.id]));
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor tag:project tag:errands')}`), new Set([n.work!.id]));
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor -tag:project')}`), new Set([n.top!.id]));
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor tag:project -tag:project')}`), new Set());
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('harbor tag:nothing')}`), new Set());
    // Quoted, it is words: "tag:project" is the phrase "tag project", in no note.
    assert.deepEqual(await ids(s, `q=${encodeURIComponent('"tag:project"')}`), new Set());
    // Another user's tags find nothing of theirs, nor of this user.
    const stranger = await newSession(ctx.app);
    await api.note(stranger, 'harbor #project');
    assert.equal((await search(stranger, `q=${encodeURIComponent('harbor tag:project')}`)).length, 1);
  });

  test('only tag: terms: the notes with those tags, newest first, a snippet from the start', async () => {
    const results = await search(s, `q=${encodeURIComponent('tag:project')}`);
    assert.deepEqual(
      results.map((r) => r.id),
      [n.plans!.id, n.work!.id],
    );
    assert.deepEqual(results[0], {
      id: n.plans!.id,
      title: 'plans harbor',
      updated_at: n.plans!.updated_at,
      snippet: 'harbor plans #project',
      highlights: [],
    });
    assert.deepEqual(
      (await search(s, `q=${encodeURIComponent('-tag:project')}`)).map((r) => r.id),
      [n.top!.id],
    );
    assert.deepEqual(
      (await search(s, `q=${encodeURIComponent('tag:project')}&limit=1&offset=1`)).map((r) => r.id),
      [n.work!.id],
    );
    const history = await search(s, `q=${encodeURIComponent('tag:errands')}&history=true`);
    assert.deepEqual(
      history.map((r) => [r.id, r.version]),
      [
        [n.work!.id, 1],
        [n.top!.id, 1],
      ],
    );
  });

  test('bad filters are 400', async () => {
    for (const query of ['q=x&folder=nope', 'q=x&tag=a%20b', 'q=x&archived=maybe']) {
      assert.equal((await api.call(s, 'GET', `/api/notes/search?${query}`)).statusCode, 400, query);
    }
  });
});
