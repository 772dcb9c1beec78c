// Issue 39: what the editor does with a merged save and a conflict, without a browser.
// text-changes.ts: changes saved elsewhere join the text on screen over what was typed meanwhile.
// merge-regions.ts / merge-choices.ts: the conflict panel's merge, and each place's choice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ChangeSet, Text } from '@codemirror/state';
import { resolved, resolvedTitle } from '../src/notes/merge-choices.js';
import { mergeRegions } from '../src/notes/merge-regions.js';
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

  it('keeps both last lines apart when neither ends with a line break', () => {
    const regions = mergeRegions('x', 'x mine', 'x theirs');
    assert.equal(resolved(regions, ['both']), 'x theirs\nx mine');
  });

  it('merges titles as the server does: one side changed is taken, both changed is a choice', () => {
    assert.equal(resolvedTitle('T', 'T', 'Theirs', 'both'), 'Theirs');
    assert.equal(resolvedTitle('T', 'Mine', 'T', 'both'), 'Mine');
    assert.equal(resolvedTitle('T', 'Mine', 'Theirs', 'both'), 'Theirs / Mine');
    assert.equal(resolvedTitle('T', 'Mine', 'Theirs', 'mine'), 'Mine');
  });
});
