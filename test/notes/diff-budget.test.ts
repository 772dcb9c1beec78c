import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { OUTPUT_LINE_LIMIT } from '../../src/notes/diff.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { fewValues, prose } from './diff-texts.js';
import { notesClient, okJson } from './support.js';

interface Diff {
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

const MiB = 1024 * 1024;

forEachDatabase('diff budget: deterministic, bounded, and off the event loop', (ctx) => {
  const api = notesClient(() => ctx.app);
  let s: Session;
  before(async () => {
    s = await newSession(ctx.app);
  });

  async function noteWith(from: string, to: string): Promise<string> {
    const note = await api.createOk(s, { title: 'budget', content: from });
    await api.addVersionOk(s, note.id, { title: 'budget', content: to });
    return note.id;
  }
  const diff = (id: string) => ctx.app.inject({ method: 'GET', url: `/api/notes/${id}/diff`, headers: s.auth });

  test('the same diff twice gives the same body, on both sides of the work budget, alone or under load', async () => {
    // Over the budget (coarse) and under it (exact), found by what the answer says.
    const over = await noteWith(fewValues(12_000, 1), fewValues(12_000, 2));
    const base = prose(60_000, 3);
    const under = await noteWith(
      base,
      base
        .split('\n')
        .map((l, i) => (i % 50 === 7 ? `${l} edited` : l))
        .join('\n'),
    );
    const load = await noteWith(fewValues(MiB / 2, 4), fewValues(MiB / 2, 5));
    for (const [id, complete] of [
      [over, false],
      [under, true],
    ] as const) {
      const alone = await diff(id);
      assert.equal(alone.statusCode, 200, alone.body);
      assert.equal(okJson<Diff>(alone).complete, complete);
      // Again, while two large diffs keep the worker and the machine busy. On a machine busy with
      // more than this test, the diff may wait past the queue's bound and be refused busy (503, as
      // documented): then the trio runs again, as a client would; an answer must be the same body.
      let loaded;
      for (let attempt = 0; attempt < 5; attempt++) {
        [loaded] = await Promise.all([diff(id), diff(load), diff(load)]);
        if (loaded!.statusCode !== 503) break;
        assert.equal(loaded!.json().code, 'busy');
      }
      assert.equal(loaded!.statusCode, 200, loaded!.body);
      assert.equal(loaded!.body, alone.body);
    }
  });

  test('worst cases at 1 MiB each answer, coarse where the budget or the output limit says so', async () => {
    const cases: Array<{ name: string; from: string; to: string; complete: boolean; stats: Diff['stats'] }> = [
      // A million one-character lines, nothing in common: exact, but longer than the answer may list.
      {
        name: 'unrelated short lines',
        from: 'a\n'.repeat(MiB / 2),
        to: 'b\n'.repeat(MiB / 2),
        complete: false,
        stats: { added: MiB / 2, removed: MiB / 2 },
      },
      // All lines the same but for an edit at the end: no anchors; prefix and suffix do the work.
      {
        name: 'identical lines',
        from: 'x\n'.repeat(MiB / 2),
        to: `${'x\n'.repeat(MiB / 2 - 10)}${'y\n'.repeat(10)}`,
        complete: true,
        stats: { added: 10, removed: 10 },
      },
      // One long line each.
      {
        name: 'one line',
        from: 'p'.repeat(MiB),
        to: `${'p'.repeat(MiB - 1)}q`,
        complete: true,
        stats: { added: 1, removed: 1 },
      },
    ];
    for (const c of cases) {
      const body = okJson<Diff>(await diff(await noteWith(c.from, c.to)));
      assert.deepEqual([c.name, body.complete, body.stats], [c.name, c.complete, c.stats]);
      const listed = body.hunks.reduce((n, h) => n + h.lines.length, 0);
      assert.ok(listed <= OUTPUT_LINE_LIMIT, `${c.name}: ${listed} lines listed`);
      assert.match(body.unified, /^--- v1\n\+\+\+ v2\n@@ /);
    }
    // Lines sharing few values, scattered edits in distinct lines: answers either way, coarse or exact.
    const scattered = prose(MiB, 6);
    for (const [from, to, complete] of [
      [fewValues(MiB, 7), fewValues(MiB, 8), false],
      // (edited in place, to stay within 1 MiB)
      [
        scattered,
        scattered
          .split('\n')
          .map((l, i) => (i % 7 === 3 ? `!${l.slice(1)}` : l))
          .join('\n'),
        true,
      ],
    ] as const) {
      const body = okJson<Diff>(await diff(await noteWith(from, to)));
      assert.equal(body.complete, complete);
    }
  });
});
