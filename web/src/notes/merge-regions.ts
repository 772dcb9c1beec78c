import { diff3Merge } from 'node-diff3';
import type { MergeConflict } from './api';
import type { Region } from './merge-choices';

/**
 * The conflict panel's regions (loaded with the panel, only when a save overlapped), cut where the
 * server's 409 `merge_conflict` says both sides changed the same lines: the places to choose are
 * exactly the server's hunks (src/notes/merge.ts finds them; nothing here finds them again). The
 * stretches between them merged without a conflict on the server; here each is the side that
 * changed it, or, when both changed it at different lines, node-diff3's merge of that stretch.
 */

/** Lines that keep their terminators; the empty text has none (as the server splits them). */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

const same = (x: string[], y: string[]) => x.length === y.length && x.every((line, i) => line === y[i]);

/** A stretch between two hunks, changed by neither side, one, or both at different lines. */
function stretch(o: string[], a: string[], b: string[]): Region[] {
  if (same(a, o) || same(a, b)) return [{ ok: b.join('') }];
  if (same(b, o)) return [{ ok: a.join('') }];
  return diff3Merge(a, o, b, { excludeFalseConflicts: true }).map((region) =>
    region.ok !== undefined
      ? { ok: region.ok.join('') }
      : // The server's merge (cut at lines each text has once) saw none here; this one does: shown as
        // one more place, both texts kept — coarser, never lossy.
        { ours: region.conflict!.a.join(''), base: region.conflict!.o.join(''), theirs: region.conflict!.b.join('') },
  );
}

/**
 * base: the version the text was typed on; ours: the text typed here (the body of the refused save);
 * theirs: the version the server merged it with (`current_version` of the 409); conflicts: its
 * hunks. Null when the hunks do not describe these texts (another version, a base no longer kept):
 * the caller then shows the whole text as one place.
 */
export function regionsFromConflicts(
  base: string,
  ours: string,
  theirs: string,
  conflicts: MergeConflict[],
): Region[] | null {
  const o = splitLines(base);
  const a = splitLines(ours);
  const b = splitLines(theirs);
  const regions: Region[] = [];
  let [oi, ai, bi] = [0, 0, 0];
  for (const hunk of conflicts) {
    if (hunk.field !== 'content') continue;
    const sides = [
      [o, oi, hunk.base],
      [a, ai, hunk.ours],
      [b, bi, hunk.theirs],
    ] as const;
    // In order, and the lines the server names are these texts' lines.
    for (const [lines, from, range] of sides)
      if (range.start - 1 < from || lines.slice(range.start - 1, range.end).join('') !== range.text) return null;
    regions.push(
      ...stretch(
        o.slice(oi, hunk.base.start - 1),
        a.slice(ai, hunk.ours.start - 1),
        b.slice(bi, hunk.theirs.start - 1),
      ),
    );
    regions.push({ ours: hunk.ours.text, base: hunk.base.text, theirs: hunk.theirs.text });
    [oi, ai, bi] = [hunk.base.end, hunk.ours.end, hunk.theirs.end];
  }
  regions.push(...stretch(o.slice(oi), a.slice(ai), b.slice(bi)));
  // Neighbouring agreed stretches as one, empty ones gone.
  const out: Region[] = [];
  for (const region of regions) {
    const last = out.at(-1);
    if ('ok' in region) {
      if (region.ok === '') continue;
      if (last !== undefined && 'ok' in last) last.ok += region.ok;
      else out.push({ ...region });
    } else out.push(region);
  }
  return out;
}
