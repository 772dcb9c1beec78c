import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { OUTPUT_LINE_LIMIT } from '../../src/notes/diff.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import {
  expectNoteNotFound,
  expectProblem,
  expectVersionNotFound,
  MISSING_ID,
  notesClient,
  okJson,
  type Note,
} from './support.js';

interface Side {
  version: number;
  version_id: string;
  created_at: string;
}
interface Diff {
  note_id: string;
  from: Side | null;
  to: Side;
  title: { from: string | null; to: string; changed: boolean };
  stats: { added: number; removed: number };
  complete: boolean;
  hunks: Array<{
    from_start: number;
    from_lines: number;
    to_start: number;
    to_lines: number;
    lines: Array<{ op: string; text: string }>;
  }>;
  unified: string;
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-diff-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** What the system `diff -u` writes for these texts, with our headers in place of its timestamped ones. */
function systemDiff(from: string, to: string, context: number, fromName: string, toName: string): string {
  const a = path.join(scratch, 'a');
  const b = path.join(scratch, 'b');
  fs.writeFileSync(a, from);
  fs.writeFileSync(b, to);
  try {
    execFileSync('diff', ['-a', `-U${context}`, a, b]);
    return '';
  } catch (error) {
    const out = error as { stdout: Buffer; status: number };
    assert.equal(out.status, 1, 'diff failed');
    const lines = out.stdout.toString('utf8').split('\n');
    assert.match(lines[0]!, /^--- /);
    assert.match(lines[1]!, /^\+\+\+ /);
    return [`--- ${fromName}`, `+++ ${toName}`, ...lines.slice(2)].join('\n');
  }
}

forEachDatabase('notes history: diff between any two versions', (ctx) => {
  const api = notesClient(() => ctx.app);
  let s: Session;
  before(async () => {
    s = await newSession(ctx.app);
  });

  const diff = (session: Session, id: string, query = '') =>
    ctx.app.inject({ method: 'GET', url: `/api/notes/${id}/diff${query}`, headers: session.auth });

  /** A note whose versions are these contents, in order; returns it with the versions' ids. */
  async function noteWith(contents: string[], titles = contents.map((_, i) => `t${i + 1}`)) {
    const note = await api.createOk(s, { title: titles[0], content: contents[0] });
    for (let i = 1; i < contents.length; i += 1)
      await api.addVersionOk(s, note.id, { title: titles[i]!, content: contents[i]! });
    return note;
  }

  /** Diffs versions 1 → 2 of a fresh note and checks `unified` against the system diff and the hunks against `unified`. */
  async function checkPair(from: string, to: string, context = 3): Promise<Diff> {
    const note = await noteWith([from, to]);
    const body = okJson<Diff>(await diff(s, note.id, `?from=1&to=2&context=${context}`));
    assert.equal(body.unified, systemDiff(from, to, context, 'v1', 'v2'));
    checkHunksMatchUnified(body);
    return body;
  }

  /** The JSON hunks say the same as the unified text: headers, ops and line texts (without \n). */
  function checkHunksMatchUnified(body: Diff) {
    const rebuilt = body.hunks
      .map((h) => {
        const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
        return `@@ -${range(h.from_start, h.from_lines)} +${range(h.to_start, h.to_lines)} @@\n${h.lines.map((l) => `${l.op === '=' ? ' ' : l.op}${l.text}\n`).join('')}`;
      })
      .join('');
    const unified = body.unified
      .split('\n')
      .slice(2)
      .filter((l) => l !== '\\ No newline at end of file')
      .join('\n');
    assert.equal(rebuilt.replace(/\n$/, ''), unified.replace(/\n$/, ''));
    const added = body.hunks.flatMap((h) => h.lines).filter((l) => l.op === '+').length;
    const removed = body.hunks.flatMap((h) => h.lines).filter((l) => l.op === '-').length;
    assert.deepEqual(body.stats, { added, removed });
  }

  const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');

  test('the whole answer: sides, title, stats, complete, hunks and unified', async () => {
    const note = await noteWith(['a\nb\nc\n', 'a\nB\nc\n'], ['first', 'second']);
    const history = await api.history(s, note.id);
    const res = await diff(s, note.id, '?from=1&to=2');
    const body = okJson<Diff>(res);
    assert.deepEqual(body, {
      note_id: note.id,
      from: { version: 1, version_id: history[1]!.id, created_at: history[1]!.created_at },
      to: { version: 2, version_id: history[0]!.id, created_at: history[0]!.created_at },
      title: { from: 'first', to: 'second', changed: true },
      stats: { added: 1, removed: 1 },
      complete: true,
      hunks: [
        {
          from_start: 1,
          from_lines: 3,
          to_start: 1,
          to_lines: 3,
          lines: [
            { op: '=', text: 'a' },
            { op: '-', text: 'b' },
            { op: '+', text: 'B' },
            { op: '=', text: 'c' },
          ],
        },
      ],
      unified: '--- v1\n+++ v2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n',
    });
    // Defaults: to = current, from = the version before it.
    assert.deepEqual(okJson<Diff>(await diff(s, note.id)), body);
  });

  test('identical versions: no hunks, empty unified, title unchanged', async () => {
    const note = await noteWith(['same\n', 'same\n'], ['t', 't']);
    const body = okJson<Diff>(await diff(s, note.id, '?from=1&to=2'));
    assert.deepEqual(
      [body.hunks, body.unified, body.stats, body.complete, body.title],
      [[], '', { added: 0, removed: 0 }, true, { from: 't', to: 't', changed: false }],
    );
    // A version against itself.
    assert.equal(okJson<Diff>(await diff(s, note.id, '?from=2&to=2')).unified, '');
  });

  test('the first version diffs against the empty document: from is null', async () => {
    const note = await noteWith(['one\ntwo'], ['title']);
    const body = okJson<Diff>(await diff(s, note.id));
    assert.equal(body.from, null);
    assert.deepEqual(body.title, { from: null, to: 'title', changed: true });
    assert.equal(body.unified, systemDiff('', 'one\ntwo', 3, '/dev/null', 'v1'));
    assert.deepEqual(body.hunks, [
      {
        from_start: 0,
        from_lines: 0,
        to_start: 1,
        to_lines: 2,
        lines: [
          { op: '+', text: 'one' },
          { op: '+', text: 'two' },
        ],
      },
    ]);
    // An empty first version: nothing to show.
    const empty = await api.createOk(s, { title: 'e', content: '' });
    assert.equal(okJson<Diff>(await diff(s, empty.id)).unified, '');
  });

  test('insert, delete and replace at the start, middle and end, as diff -u writes them', async () => {
    const base = lines(30);
    const rows = base
      .split('\n')
      .slice(0, -1)
      .map((l) => `${l}\n`);
    const at = (i: number, f: (r: string[]) => void) => {
      const copy = [...rows];
      f(copy);
      return copy.join('');
    };
    for (const index of [0, 15, 29]) {
      await checkPair(
        base,
        at(index, (r) => r.splice(index, 0, 'inserted\n')),
      );
      await checkPair(
        base,
        at(index, (r) => r.splice(index, 1)),
      );
      await checkPair(
        base,
        at(index, (r) => r.splice(index, 1, 'replaced\n', 'and more\n')),
      );
    }
    // Append after the end, changes far apart (two hunks) and close together (one hunk).
    await checkPair(base, `${base}tail\n`);
    await checkPair(
      base,
      at(0, (r) => {
        r[3] = 'x\n';
        r[25] = 'y\n';
      }),
    );
    await checkPair(
      base,
      at(0, (r) => {
        r[3] = 'x\n';
        r[10] = 'y\n';
      }),
    );
    await checkPair(
      base,
      at(0, (r) => {
        r[3] = 'x\n';
        r[9] = 'y\n';
      }),
    );
    await checkPair(base, '');
    await checkPair('', base);
  });

  test('no final newline on either side, and CRLF lines', async () => {
    await checkPair('a\nb', 'a\nb\n');
    await checkPair('a\nb\n', 'a\nb');
    await checkPair('a\nb', 'a\nc');
    await checkPair('x', '');
    await checkPair('one\r\ntwo\r\nthree\r\n', 'one\r\nTWO\r\nthree\r\n');
    await checkPair('one\r\ntwo\r\n', 'one\ntwo\n');
    const body = await checkPair('a\nb', 'a\nb\n');
    assert.deepEqual(body.hunks[0]!.lines, [
      { op: '=', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'b' },
    ]);
    const crlf = await checkPair('one\r\n', 'two\r\n');
    assert.deepEqual(crlf.hunks[0]!.lines, [
      { op: '-', text: 'one\r' },
      { op: '+', text: 'two\r' },
    ]);
  });

  test('Unicode: emoji, combining marks and NUL survive into hunks and unified text', async () => {
    const from = 'café 😀\nn\u0303o\nnul\u0000here\nend\n';
    const to = 'cafe\u0301 😀👍\nn\u0303o\nnul\u0000there\nend\n';
    const body = await checkPair(from, to);
    assert.deepEqual(body.hunks[0]!.lines, [
      { op: '-', text: 'café 😀' },
      { op: '+', text: 'cafe\u0301 😀👍' },
      { op: '=', text: 'n\u0303o' },
      { op: '-', text: 'nul\u0000here' },
      { op: '+', text: 'nul\u0000there' },
      { op: '=', text: 'end' },
    ]);
    assert.equal(body.stats.added, 2);
    assert.equal(body.stats.removed, 2);
  });

  test('context 0 and 20; outside 0..20 or not a number is 400', async () => {
    const base = lines(60);
    const changed = base.replace('line 10\n', 'ten\n').replace('line 40\n', 'forty\n');
    const zero = await checkPair(base, changed, 0);
    assert.equal(zero.hunks.length, 2);
    const wide = await checkPair(base, changed, 20);
    assert.equal(wide.hunks.length, 1);
    const note = await noteWith(['a', 'b']);
    for (const bad of ['-1', '21', 'x', '1.5', '']) {
      expectProblem(
        await diff(s, note.id, `?context=${bad}`),
        400,
        'Query parameter "context" must be an integer from 0 to 20',
        'invalid_query',
      );
    }
  });

  test('reversed order diffs the later version into the earlier one', async () => {
    const note = await noteWith(['a\nb\n', 'a\nc\n']);
    const body = okJson<Diff>(await diff(s, note.id, '?from=2&to=1'));
    assert.equal(body.from!.version, 2);
    assert.equal(body.to.version, 1);
    assert.equal(body.unified, systemDiff('a\nc\n', 'a\nb\n', 3, 'v2', 'v1'));
  });

  test('unknown and pruned numbers are 404 Version not found; malformed numbers 400; from defaults past a gap', async () => {
    const note = await noteWith(['one\n', 'two\n', 'three\n']);
    for (const q of ['?from=9', '?to=9', '?from=1&to=4', '?from=2147483648', '?to=9007199254740991'])
      expectVersionNotFound(await diff(s, note.id, q));
    for (const [q, name] of [
      ['?from=0', 'from'],
      ['?to=abc', 'to'],
      ['?from=-1', 'from'],
      ['?to=1e3', 'to'],
      ['?from=99999999999999999', 'from'],
    ] as const) {
      expectProblem(
        await diff(s, note.id, q),
        400,
        `Query parameter "${name}" must be a version number (an integer 1 or more)`,
        'invalid_query',
      );
    }
    // Version 2 pruned: naming it is 404, and the default "from" of version 3 is version 1.
    await ctx.database.db.deleteFrom('note_versions').where('note_id', '=', note.id).where('version', '=', 2).execute();
    expectVersionNotFound(await diff(s, note.id, '?from=2'));
    const body = okJson<Diff>(await diff(s, note.id));
    assert.equal(body.from!.version, 1);
    assert.equal(body.unified, '--- v1\n+++ v3\n@@ -1 +1 @@\n-one\n+three\n');
  });

  test("another user's note and a missing note are 404 Note not found", async () => {
    const note = await noteWith(['a', 'b']);
    const other = await newSession(ctx.app);
    expectNoteNotFound(await diff(other, note.id, '?from=1&to=2'));
    expectNoteNotFound(await diff(s, MISSING_ID));
    const res = await ctx.app.inject({ method: 'GET', url: `/api/notes/${note.id}/diff` });
    assert.equal(res.statusCode, 401);
  });

  test('two unrelated 1 MiB versions: an answer, coarse and cut at the output limit, that still says exactly what changed', async () => {
    let from = '';
    let to = '';
    for (let i = 0; from.length < 1024 * 1024 - 16; i += 1) from += `${i % 97} alpha ${i % 13}\n`;
    for (let i = 0; to.length < 1024 * 1024 - 16; i += 1) to += `${i % 89} beta ${i % 7}\n`;
    // Shared blank lines so that the texts are not trivially disjoint.
    from = from.replace(/\n(?=1 )/g, '\n\n');
    to = to.replace(/\n(?=1 )/g, '\n\n');
    from = from.slice(0, 1024 * 1024);
    to = to.slice(0, 1024 * 1024);
    const note = await noteWith([from, to]);
    const body = okJson<Diff>(await diff(s, note.id, '?context=0'));
    // Over 150,000 changed lines: the hunks list the first OUTPUT_LINE_LIMIT, and complete is false.
    const listed = body.hunks.flatMap((h) => h.lines);
    assert.equal(listed.length, OUTPUT_LINE_LIMIT);
    assert.equal(body.complete, false);
    // stats count every change, listed or not: together they turn one line count into the other.
    assert.equal(from.split('\n').length - body.stats.removed + body.stats.added, to.split('\n').length);
    assert.ok(body.stats.added + body.stats.removed > OUTPUT_LINE_LIMIT);
    // Applying the hunks to `from` gives `to` as far as they reach.
    const a = from.split('\n');
    const out: string[] = [];
    let cursor = 0;
    for (const h of body.hunks) {
      const start = h.from_lines === 0 ? h.from_start : h.from_start - 1;
      out.push(...a.slice(cursor, start));
      cursor = start + h.from_lines;
      out.push(...h.lines.filter((l) => l.op === '+').map((l) => l.text));
    }
    const last = body.hunks.at(-1)!;
    assert.equal(out.length, last.to_lines === 0 ? last.to_start : last.to_start - 1 + last.to_lines);
    assert.deepEqual(out, to.split('\n').slice(0, out.length));
    checkHunksMatchUnified({
      ...body,
      stats: { added: listed.filter((l) => l.op === '+').length, removed: listed.filter((l) => l.op === '-').length },
    });
  });

  test('a note keeps working while another request diffs large versions', async () => {
    const big = 'x\n'.repeat(400_000);
    const note = await noteWith([big, 'y\n'.repeat(400_000)]);
    const small = await noteWith(['small']);
    const [large, read] = await Promise.all([diff(s, note.id), api.get(s, small.id)]);
    assert.equal(large.statusCode, 200);
    assert.equal(okJson<Note>(read).content, 'small');
    assert.deepEqual(okJson<Diff>(large).stats, { added: 400_000, removed: 400_000 });
  });
});
