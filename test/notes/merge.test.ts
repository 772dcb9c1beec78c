import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { racedApp } from '../helpers/pause.js';
import {
  expectNoContent,
  expectNoteNotFound,
  expectProblem,
  JSON_TYPE,
  NOTE_KEYS,
  notesClient,
  okJson,
  type Note,
} from './support.js';

/** Merging saves (docs/api.md, Notes): POST /notes/{id}/versions?merge=true with a stale If-Match. */
forEachDatabase('notes: merging saves', (ctx) => {
  const api = notesClient(() => ctx.app);
  const raced = racedApp(ctx);
  let s: Session;
  before(async () => {
    s = await newSession(ctx.app);
  });

  const save = (
    id: string,
    body: { title: string; content: string },
    ifMatch: string | undefined,
    query = '?merge=true',
    app = ctx.app,
  ) =>
    app.inject({
      method: 'POST',
      url: `/api/notes/${id}/versions${query}`,
      payload: body,
      headers: { ...s.auth, ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) },
    });

  /** A note at version 2: `base` as version 1, `theirs` saved over it since. */
  async function changedSince(base: string, theirs: string, titles: [string, string] = ['T', 'T']) {
    const note = await api.createOk(s, { title: titles[0], content: base });
    await api.addVersionOk(s, note.id, { title: titles[1], content: theirs });
    return note.id;
  }

  async function expectMerged(
    res: LightMyRequestResponse,
    id: string,
    expected: { title: string; content: string; version: number },
  ) {
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const body = res.json() as Note & { merged: boolean };
    assert.deepEqual(Object.keys(body).sort(), [...NOTE_KEYS, 'merged'].sort());
    assert.deepEqual(
      [body.merged, body.title, body.content, body.version],
      [true, expected.title, expected.content, expected.version],
    );
    assert.equal(res.headers.etag, `"${expected.version}"`);
    assert.equal(res.headers.location, `/api/notes/${id}/${body.version_id}`);
    const { merged: _, ...note } = body;
    assert.deepEqual(okJson<Note>(await api.get(s, id)), note);
    return body;
  }

  const versionCount = async (id: string) => (await api.history(s, id)).length;
  /** The newest history row: who wrote it. */
  const newest = async (id: string) =>
    okJson<Array<{ version: number; author_username: string; restored_from: number | null }>>(
      await api.versions(s, id),
    )[0]!;

  test('changes to different lines merge: 201, merged: true, the note as saved with both; the author and tags as on any save', async () => {
    const id = await changedSince('a\nb\nc\nd\ne\n', 'a\nB #theirs\nc\nd\ne\n');
    const res = await save(id, { title: 'T', content: 'a\nb\nc\nD #ours\ne\n' }, '"1"');
    const body = await expectMerged(res, id, { title: 'T', content: 'a\nB #theirs\nc\nD #ours\ne\n', version: 3 });
    assert.deepEqual(body.tags, ['ours', 'theirs']);
    const row = await newest(id);
    assert.deepEqual([row.version, row.author_username, row.restored_from], [3, s.username, null]);
  });

  test('one side adds at the end, the other changes the middle', async () => {
    const id = await changedSince('one\ntwo\nthree\nfour\n', 'one\ntwo\nthree\nfour\nfive\n');
    await expectMerged(await save(id, { title: 'T', content: 'one\nTWO\nthree\nfour\n' }, '"1"'), id, {
      title: 'T',
      content: 'one\nTWO\nthree\nfour\nfive\n',
      version: 3,
    });
  });

  test('a longer note (merged off the event loop) keeps every line of both', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} of a long note\n`);
    const theirs = lines.map((l, i) => (i === 1500 ? 'theirs\n' : l));
    const ours = lines.map((l, i) => (i === 10 ? 'ours\n' : l));
    const id = await changedSince(lines.join(''), theirs.join(''));
    const merged = lines.map((l, i) => (i === 10 ? 'ours\n' : i === 1500 ? 'theirs\n' : l)).join('');
    await expectMerged(await save(id, { title: 'T', content: ours.join('') }, '"1"'), id, {
      title: 'T',
      content: merged,
      version: 3,
    });
  });

  test('overlapping changes: 409 merge_conflict with every conflict, base/ours/theirs line ranges and text; nothing saved', async () => {
    const id = await changedSince('a\nb\nc\nd\ne\nf\n', 'a\nB1\nc\nd\ne\nF1\n');
    const res = await save(id, { title: 'T', content: 'a\nB2\nx\nc\nd\ne\n' }, '"1"');
    expectProblem(
      res,
      409,
      "Your changes and the note's current version (2) change the same lines; nothing was saved",
      'merge_conflict',
      {
        current_version: 2,
        conflicts: [
          {
            field: 'content',
            base: { start: 2, end: 2, text: 'b\n' },
            ours: { start: 2, end: 3, text: 'B2\nx\n' },
            theirs: { start: 2, end: 2, text: 'B1\n' },
          },
          {
            field: 'content',
            base: { start: 6, end: 6, text: 'f\n' },
            ours: { start: 7, end: 6, text: '' },
            theirs: { start: 6, end: 6, text: 'F1\n' },
          },
        ],
      },
    );
    assert.equal(res.headers.etag, undefined);
    assert.equal(await versionCount(id), 2);
    assert.equal(okJson<Note>(await api.get(s, id)).content, 'a\nB1\nc\nd\ne\nF1\n');
  });

  test('repeated lines: one side deletes one, the other ticks another: a conflict, never the deletion lost', async () => {
    const lines = (...all: string[]) => all.map((line) => `${line}\n`).join('');
    const base = lines(
      '- [ ] eggs',
      '- [ ] eggs',
      '- [ ] eggs',
      '---',
      '- [ ] eggs',
      '',
      'Summary',
      '---',
      'end',
      'end',
    );
    // Saved first, elsewhere: one of the three top lines gone, the last line rewritten.
    const theirs = lines('- [ ] eggs', '- [ ] eggs', '---', '- [ ] eggs', '', 'Summary', '---', 'end', 'the end');
    const id = await changedSince(base, theirs);
    // The first line ticked. node-diff3 aligned this as "insert a line, delete the third": the
    // deletion elsewhere then looked made by both and was merged once (three lines stayed on top).
    const ours = base.replace('- [ ] eggs', '- [x] eggs');
    const res = await save(id, { title: 'T', content: ours }, '"1"');
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().code, 'merge_conflict');
    assert.deepEqual(
      (res.json().conflicts as Array<{ base: { text: string } }>).map((c) => c.base.text),
      // The piece before the first line that occurs once in each text (''), whole.
      [lines('- [ ] eggs', '- [ ] eggs', '- [ ] eggs', '---', '- [ ] eggs')],
    );
    assert.equal(okJson<Note>(await api.get(s, id)).content, theirs);
  });

  test('the same change on both sides is no conflict', async () => {
    const id = await changedSince('a\nb\nc\n', 'a\nX\nc\n');
    await expectMerged(await save(id, { title: 'T', content: 'a\nX\nc\nd\n' }, '"1"'), id, {
      title: 'T',
      content: 'a\nX\nc\nd\n',
      version: 3,
    });
  });

  test('without merge=true (or with merge=false) a stale If-Match stays 412 version_mismatch', async () => {
    const id = await changedSince('a\nb\n', 'a\nB\n');
    for (const query of ['', '?merge=false']) {
      const res = await save(id, { title: 'T', content: 'A\nb\n' }, '"1"', query);
      expectProblem(res, 412, 'The note has changed: its current version is 2', 'version_mismatch', {
        current_version: 2,
      });
      assert.equal(res.headers.etag, '"2"');
    }
    assert.equal(await versionCount(id), 2);
  });

  test('merge=true with the current If-Match, *, or none is a plain save: 204 and the ETag, the body taken as sent', async () => {
    const id = await changedSince('a\n', 'b\n');
    let version = 2;
    for (const ifMatch of ['"2"', '"1", "3"', '*', undefined]) {
      const res = await save(id, { title: 'plain', content: `saved ${version + 1}` }, ifMatch);
      expectNoContent(res);
      version += 1;
      assert.equal(res.headers.etag, `"${version}"`);
      assert.equal(res.headers['content-type'], undefined);
      assert.equal(okJson<Note>(await api.get(s, id)).content, `saved ${version}`);
    }
  });

  test('titles: a change on one side is taken; different changes on both conflict as field title, line 1', async () => {
    let id = await changedSince('a\n', 'a\n', ['base', 'theirs']);
    await expectMerged(await save(id, { title: 'base', content: 'a\nours\n' }, '"1"'), id, {
      title: 'theirs',
      content: 'a\nours\n',
      version: 3,
    });
    id = await changedSince('a\n', 'a\ntheirs\n', ['base', 'base']);
    await expectMerged(await save(id, { title: 'ours', content: 'a\n' }, '"1"'), id, {
      title: 'ours',
      content: 'a\ntheirs\n',
      version: 3,
    });
    id = await changedSince('a\n', 'a\n', ['base', 'same']);
    await expectMerged(await save(id, { title: 'same', content: 'a\n' }, '"1"'), id, {
      title: 'same',
      content: 'a\n',
      version: 3,
    });
    id = await changedSince('a\nb\n', 'A\nb\n', ['base', 'theirs']);
    const res = await save(id, { title: 'ours', content: 'a2\nb\n' }, '"1"');
    expectProblem(
      res,
      409,
      "Your changes and the note's current version (2) change the same lines; nothing was saved",
      'merge_conflict',
      {
        current_version: 2,
        conflicts: [
          {
            field: 'title',
            base: { start: 1, end: 1, text: 'base' },
            ours: { start: 1, end: 1, text: 'ours' },
            theirs: { start: 1, end: 1, text: 'theirs' },
          },
          {
            field: 'content',
            base: { start: 1, end: 1, text: 'a\n' },
            ours: { start: 1, end: 1, text: 'a2\n' },
            theirs: { start: 1, end: 1, text: 'A\n' },
          },
        ],
      },
    );
    assert.equal(await versionCount(id), 2);
  });

  test('line endings stay exact: no final newline, CRLF, an empty base, Unicode', async () => {
    // No final newline on any side: the last line is kept as written.
    let id = await changedSince('a\nb\nc', 'A\nb\nc');
    await expectMerged(await save(id, { title: 'T', content: 'a\nb\nC' }, '"1"'), id, {
      title: 'T',
      content: 'A\nb\nC',
      version: 3,
    });
    // Adding a final newline changes the last line: a change there from both sides conflicts.
    id = await changedSince('a\nb\nc', 'a\nb\nc\n');
    let res = await save(id, { title: 'T', content: 'a\nb\nc\nd' }, '"1"');
    assert.equal(res.statusCode, 409, res.body);
    assert.deepEqual(res.json().conflicts, [
      {
        field: 'content',
        base: { start: 3, end: 3, text: 'c' },
        ours: { start: 3, end: 4, text: 'c\nd' },
        theirs: { start: 3, end: 3, text: 'c\n' },
      },
    ]);
    // CRLF lines stay CRLF; a line ending changed on one side only is that side's change.
    id = await changedSince('a\r\nb\r\nc\r\nd\r\n', 'a\r\nB\r\nc\r\nd\r\n');
    await expectMerged(await save(id, { title: 'T', content: 'a\r\nb\r\nc\r\nd\n' }, '"1"'), id, {
      title: 'T',
      content: 'a\r\nB\r\nc\r\nd\n',
      version: 3,
    });
    // Empty base: both sides wrote something new, which overlaps; writing nothing takes the other's text.
    id = await changedSince('', 'theirs\n');
    res = await save(id, { title: 'T', content: 'ours\n' }, '"1"');
    assert.equal(res.statusCode, 409, res.body);
    assert.deepEqual(res.json().conflicts, [
      {
        field: 'content',
        base: { start: 1, end: 0, text: '' },
        ours: { start: 1, end: 1, text: 'ours\n' },
        theirs: { start: 1, end: 1, text: 'theirs\n' },
      },
    ]);
    id = await changedSince('', 'theirs\n');
    await expectMerged(await save(id, { title: 'T', content: '' }, '"1"'), id, {
      title: 'T',
      content: 'theirs\n',
      version: 3,
    });
    // Unicode: astral characters, combining marks and U+2028 inside lines are just text.
    id = await changedSince('α\n🎉 party\ne\u0301\nz\u2028z\n', 'α\n🎉 PARTY\ne\u0301\nz\u2028z\n');
    await expectMerged(await save(id, { title: '✓', content: 'α\n🎉 party\ne\u0301\nz\u2028z 👍\n' }, '"1"'), id, {
      title: '✓',
      content: 'α\n🎉 PARTY\ne\u0301\nz\u2028z 👍\n',
      version: 3,
    });
  });

  test('merge accepts true or false only: anything else is 400', async () => {
    const id = await changedSince('a\n', 'b\n');
    for (const value of ['1', 'TRUE', 'yes', '']) {
      const res = await save(id, { title: 'T', content: 'c\n' }, '"1"', `?merge=${value}`);
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().detail, /merge/);
    }
    assert.equal(await versionCount(id), 2);
  });

  test('an If-Match naming no version the note has had is 412 as without merge', async () => {
    const id = await changedSince('a\n', 'b\n');
    for (const ifMatch of ['"99"', 'W/"1"']) {
      const res = await save(id, { title: 'T', content: 'c\n' }, ifMatch);
      expectProblem(res, 412, 'The note has changed: its current version is 2', 'version_mismatch', {
        current_version: 2,
      });
    }
    // Of several tags, the newest one the note has had is the base.
    const other = await changedSince('a\nb\nc\n', 'A\nb\nc\n');
    await expectMerged(await save(other, { title: 'T', content: 'a\nb\nC\n' }, '"1", "99"'), other, {
      title: 'T',
      content: 'A\nb\nC\n',
      version: 3,
    });
    await api.addVersionOk(s, other, { title: 'T', content: 'A\nb\nC\nd\n' });
    // Against version 3 the body undoes the A; against version 1 it would keep it.
    await expectMerged(await save(other, { title: 'T', content: 'a\nb\nC\n' }, '"3", "1"'), other, {
      title: 'T',
      content: 'a\nb\nC\nd\n',
      version: 5,
    });
  });

  test('a viewer gets 403 and an editor merges, as its author', async () => {
    const editor = await newSession(ctx.app, 'edi');
    const viewer = await newSession(ctx.app, 'vie');
    const id = await changedSince('a\nb\nc\n', 'A\nb\nc\n');
    for (const [who, role] of [
      [editor, 'editor'],
      [viewer, 'viewer'],
    ] as const) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${id}/members`,
        headers: s.auth,
        payload: { username: who.username, role },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const as = (who: Session) =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${id}/versions?merge=true`,
        headers: { ...who.auth, 'if-match': '"1"' },
        payload: { title: 'T', content: 'a\nb\nC\n' },
      });
    assert.equal((await as(viewer)).statusCode, 403);
    const res = await as(editor);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().content, 'A\nb\nC\n');
    assert.equal((await newest(id)).author_username, editor.username);
  });

  test("race: a save between the merge's read and its save is merged in too (one retry)", async () => {
    const id = await changedSince('a\nb\nc\nd\ne\n', 'A\nb\nc\nd\ne\n');
    const held = raced.pause.arm('notes:merge-read');
    const merging = save(id, { title: 'T', content: 'a\nb\nc\nd\nE\n' }, '"1"', '?merge=true', raced.app);
    await held.reached;
    await api.addVersionOk(s, id, { title: 'T', content: 'A\nb\nC\nd\ne\n' });
    held.release();
    await expectMerged(await merging, id, { title: 'T', content: 'A\nb\nC\nd\nE\n', version: 4 });
  });

  test('race: a save naming no version, made while the note was in the trash, is 404 though the note is back before the answer', async () => {
    const id = await changedSince('a\n', 'b\n');
    const call = (method: 'DELETE' | 'POST', url: string) => ctx.app.inject({ method, url, headers: s.auth });
    for (const query of ['', '?merge=true']) {
      // Past the access check, the note goes to the trash before the write, and is back before the answer.
      const writing = raced.pause.arm('notes:save-write');
      const saving = save(id, { title: 'T', content: 'c\n' }, undefined, query, raced.app);
      await writing.reached;
      expectNoContent(await call('DELETE', `/api/notes/${id}`));
      // Armed in the same turn as the release (one step is armed at a time): before the save goes on.
      writing.release();
      const missed = raced.pause.arm('notes:save-missed');
      await missed.reached;
      assert.equal((await call('POST', `/api/trash/${id}/restore`)).statusCode, 200);
      missed.release();
      // Not 412 version_mismatch: it named no version to be stale against.
      expectNoteNotFound(await saving);
    }
    assert.equal(await versionCount(id), 2);
  });

  test('race: losing twice is 412 version_mismatch naming the newest version, and nothing of the body is saved', async () => {
    const id = await changedSince('a\nb\nc\nd\ne\n', 'A\nb\nc\nd\ne\n');
    const first = raced.pause.arm('notes:merge-read');
    const merging = save(id, { title: 'T', content: 'a\nb\nc\nd\nE\n' }, '"1"', '?merge=true', raced.app);
    await first.reached;
    await api.addVersionOk(s, id, { title: 'T', content: 'A\nb\nC\nd\ne\n' });
    first.release();
    const second = raced.pause.arm('notes:merge-read');
    await second.reached;
    await api.addVersionOk(s, id, { title: 'T', content: 'A\nB\nC\nd\ne\n' });
    second.release();
    const res = await merging;
    expectProblem(res, 412, 'The note has changed: its current version is 4', 'version_mismatch', {
      current_version: 4,
    });
    assert.equal(await versionCount(id), 4);
    assert.equal(okJson<Note>(await api.get(s, id)).content, 'A\nB\nC\nd\ne\n');
  });
});
