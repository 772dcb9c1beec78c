// Issue 39: what the editor does with a merged save and a conflict, without a browser.
// text-changes.ts: changes saved elsewhere join the text on screen over what was typed meanwhile.
// merge-regions.ts / merge-choices.ts: the conflict panel's regions, cut at the hunks of the server's
// 409 (computed here by the server's own merge, src/notes/merge.ts), and each place's choice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ChangeSet, Text } from '@codemirror/state';
import { resolved, resolvedTitle } from '../src/notes/merge-choices.js';
import { mergeContent, mergeTitle } from '../../src/notes/merge.js';
import type { MergeConflict } from '../src/notes/api.js';
import { regionsFromConflicts } from '../src/notes/merge-regions.js';
import { changesBetween, changesOnto } from '../src/notes/text-changes.js';

/** A ChangeSet applied to a string (CodeMirror applies them to its Text). */
const applied = (changes: ChangeSet, text: string) => changes.apply(Text.of(text.split('\n'))).toString();

describe('changes between texts', () => {
  it('turns one text into the other, change by change, leaving what is common alone', () => {
    const a = 'one\ntwo\nthree\nfour\n';
    const b = 'zero\none\ntwo\nthree and more\nfour\n';
    const changes = changesBetween(a, b);
    assert.equal(applied(changes, a), b);
    const touched: number[] = [];
    changes.iterChangedRanges((fromA) => touched.push(fromA));
    // Two places, not one replaced stretch: a cursor on line two is not inside a change.
    assert.equal(touched.length, 2);
  });

  it('brings changes made elsewhere over text typed meanwhile, keeping both', () => {
    const from = 'one\ntwo\nthree\n';
    const merged = 'zero\none\ntwo\nthree\n'; // the save came back with a line added elsewhere
    const current = 'one\ntwo, typed while saving\nthree\n';
    const changes = changesOnto(current, from, merged);
    assert.equal(applied(changes, current), 'zero\none\ntwo, typed while saving\nthree\n');
    assert.equal(applied(changesOnto(from, from, merged), from), merged);
  });
});

/** What the server's 409 lists for these texts (title unchanged): its hunks, in order. */
function hunks(base: string, ours: string, theirs: string): MergeConflict[] {
  const outcome = mergeContent(base, ours, theirs);
  assert.equal(outcome.merged, false, 'the server sees an overlap');
  return outcome.merged ? [] : outcome.conflicts;
}
const mergeRegions = (base: string, ours: string, theirs: string) =>
  regionsFromConflicts(base, ours, theirs, hunks(base, ours, theirs))!;

describe('the conflict panel merge', () => {
  it('keeps every agreed change and shows the overlapping place with both sides', () => {
    const base = 'a\nb\nc\nd\ne\n';
    const mine = 'a mine\nb\nc\nd mine\ne\n';
    const theirs = 'a\nb\nc\nd theirs\ne\nf theirs\n';
    const regions = mergeRegions(base, mine, theirs);
    const places = regions.filter((r) => !('ok' in r));
    assert.deepEqual(places, [{ ours: 'd mine\n', theirs: 'd theirs\n', base: 'd\n' }]);
    assert.equal(resolved(regions, ['both']), 'a mine\nb\nc\nd theirs\nd mine\ne\nf theirs\n');
    assert.equal(resolved(regions, ['mine']), 'a mine\nb\nc\nd mine\ne\nf theirs\n');
    assert.equal(resolved(regions, ['theirs']), 'a mine\nb\nc\nd theirs\ne\nf theirs\n');
  });

  it('merges a stretch both changed at different lines, between the places the server named', () => {
    const base = 'a\nb\nc\nd\ne\nf\ng\n';
    const mine = 'a mine\nb\nc\nd\ne\nf mine\ng\n';
    const theirs = 'a\nb\nc theirs\nd\ne\nf theirs\ng\n';
    const regions = mergeRegions(base, mine, theirs);
    assert.deepEqual(
      regions.filter((r) => !('ok' in r)),
      [{ ours: 'f mine\n', theirs: 'f theirs\n', base: 'f\n' }],
    );
    assert.equal(resolved(regions, ['both']), 'a mine\nb\nc theirs\nd\ne\nf theirs\nf mine\ng\n');
  });

  it("the places are exactly the server's hunks, each with both sides' text", () => {
    // Small random texts over few distinct lines: repeated lines, empty texts, no final line break.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const text = () => Array.from({ length: random(7) }, () => ['x\n', 'y\n', 'z\n', '\n', 'w'][random(5)]).join('');
    let checked = 0;
    for (let i = 0; i < 2000; i += 1) {
      const [base, ours, theirs] = [text(), text(), text()];
      const outcome = mergeContent(base, ours, theirs);
      if (outcome.merged) continue;
      checked += 1;
      const regions = regionsFromConflicts(base, ours, theirs, outcome.conflicts);
      assert.ok(regions !== null, JSON.stringify({ base, ours, theirs }));
      assert.deepEqual(
        regions.filter((r) => !('ok' in r)),
        outcome.conflicts.map((h) => ({ ours: h.ours.text, base: h.base.text, theirs: h.theirs.text })),
        JSON.stringify({ base, ours, theirs }),
      );
    }
    assert.ok(checked > 100, `${checked} overlapping triples`);
  });

  it('refuses hunks that describe other texts (a later version): the caller shows the whole text', () => {
    const conflicts = hunks('a\n', 'a mine\n', 'a theirs\n');
    assert.equal(regionsFromConflicts('a\n', 'a mine\n', 'a later\n', conflicts), null);
  });

  it('keeps both last lines apart when neither ends with a line break', () => {
    const regions = mergeRegions('x', 'x mine', 'x theirs');
    assert.equal(resolved(regions, ['both']), 'x theirs\nx mine');
  });

  it('leaves a title-only clash to the title choice: the text merges', () => {
    const clash = mergeTitle('T', 'Mine', 'Theirs');
    assert.equal(clash.merged, false);
    const conflicts = clash.merged ? [] : [clash.conflict];
    const regions = regionsFromConflicts('a\nb\nc\n', 'a mine\nb\nc\n', 'a\nb\nc theirs\n', conflicts)!;
    assert.deepEqual(regions, [{ ok: 'a mine\nb\nc theirs\n' }]);
  });

  it('merges titles as the server does: one side changed is taken, both changed is a choice', () => {
    assert.equal(resolvedTitle('T', 'T', 'Theirs', 'both'), 'Theirs');
    assert.equal(resolvedTitle('T', 'Mine', 'T', 'both'), 'Mine');
    assert.equal(resolvedTitle('T', 'Mine', 'Theirs', 'both'), 'Theirs / Mine');
    assert.equal(resolvedTitle('T', 'Mine', 'Theirs', 'mine'), 'Mine');
  });
});
