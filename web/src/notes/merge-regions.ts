import { diff3Merge } from 'node-diff3';
import type { Region } from './merge-choices';

/**
 * The conflict panel's three-way merge (loaded with the panel, only when a save overlapped): the
 * same line merge the server runs for `?merge=true` (src/notes/merge.ts: node-diff3 on lines that
 * keep their endings), but keeping every region in order, so the panel can show the merged text
 * with each overlapping place in it and let the person choose there.
 */

/** Lines that keep their terminators; the empty text has none (as the server splits them). */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** base: the version the text was typed on; ours: the text typed here; theirs: the version saved elsewhere. */
export function mergeRegions(base: string, ours: string, theirs: string): Region[] {
  if (ours === theirs || theirs === base) return [{ ok: ours }];
  if (ours === base) return [{ ok: theirs }];
  const o = splitLines(base);
  const a = splitLines(ours);
  const b = splitLines(theirs);
  // The lines all three share at the start and at the end are set aside (a long note, a short change).
  let head = 0;
  while (head < o.length && head < a.length && head < b.length && o[head] === a[head] && o[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < o.length - head &&
    tail < a.length - head &&
    tail < b.length - head &&
    o[o.length - 1 - tail] === a[a.length - 1 - tail] &&
    o[o.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail += 1;
  const regions: Region[] = [{ ok: o.slice(0, head).join('') }];
  for (const region of diff3Merge(
    a.slice(head, a.length - tail),
    o.slice(head, o.length - tail),
    b.slice(head, b.length - tail),
    {
      excludeFalseConflicts: true,
    },
  )) {
    if (region.ok !== undefined) regions.push({ ok: region.ok.join('') });
    else if (region.conflict !== undefined)
      regions.push({
        ours: region.conflict.a.join(''),
        base: region.conflict.o.join(''),
        theirs: region.conflict.b.join(''),
      });
  }
  regions.push({ ok: o.slice(o.length - tail).join('') });
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
