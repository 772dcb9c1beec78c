import { ChangeSet, type ChangeSpec } from '@codemirror/state';
// The one function, not the package's index: that would bring every kind of diff along.
import { diffArrays } from 'diff/lib/diff/array.js';

/** Lines that keep their terminators. */
const lines = (text: string) => text.match(/[^\n]*\n|[^\n]+$/g) ?? [];

/**
 * The changes that turn `a` into `b`, as CodeMirror changes on `a`: what the two share at both ends
 * is set aside, and the rest is compared by lines, so changes in two places stay two changes (a
 * cursor between them, and text typed there, are kept where they are).
 */
export function changesBetween(a: string, b: string): ChangeSet {
  let head = 0;
  const max = Math.min(a.length, b.length);
  while (head < max && a.charCodeAt(head) === b.charCodeAt(head)) head += 1;
  // Back to the start of a line, so the lines compared below are whole.
  head = a.lastIndexOf('\n', head - 1) + 1;
  let tail = 0;
  while (tail < max - head && a.charCodeAt(a.length - 1 - tail) === b.charCodeAt(b.length - 1 - tail)) tail += 1;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const specs: ChangeSpec[] = [];
  if (midA === '' || midB === '' || midA.length + midB.length > 200_000) {
    if (midA !== midB) specs.push({ from: head, to: head + midA.length, insert: midB });
  } else {
    let at = head;
    for (const part of diffArrays(lines(midA), lines(midB))) {
      const text = part.value.join('');
      if (part.added) specs.push({ from: at, insert: text });
      else if (part.removed) {
        specs.push({ from: at, to: at + text.length });
        at += text.length;
      } else at += text.length;
    }
  }
  return ChangeSet.of(specs, a.length);
}

/**
 * The changes that take the editor from `current` to what `from` → `to` means for it: `to` was made
 * from `from` (a merge with changes saved elsewhere), and `current` is `from` plus whatever was
 * typed since; those changes are moved over what was typed, so nothing typed meanwhile is lost.
 */
export function changesOnto(current: string, from: string, to: string): ChangeSet {
  const merged = changesBetween(from, to);
  if (current === from) return merged;
  return merged.map(changesBetween(from, current));
}
