import { diff3Merge } from 'node-diff3';

/**
 * Three-way merge of a note's content by lines (POST /notes/{id}/versions?merge=true, docs/api.md,
 * Notes): base is the version the client started from, ours what it sends, theirs the current one.
 *
 * A line keeps its terminator ("\n", or "\r\n" as "…\r\n"), so a text's last line without one is a
 * different line from the same words with one, and joining the merged lines gives back exactly the
 * bytes each side wrote: no newline is added, dropped or converted.
 *
 * node-diff3 does the merging. Its longest-common-subsequence search costs about (lines of one
 * text) × (lines of the other) steps even for two texts that differ by a line (3.6 s for a 1 MiB
 * note of 15,000 lines), so it is given small pieces: the lines common to the start and the end of
 * all three texts are set aside, and what is left is cut at lines that occur exactly once in each
 * text and in the same order in all three (as patience diff anchors its diffs). A piece changed by
 * one side only takes that side's lines without any search; a piece both sides changed is merged by
 * node-diff3, or, past WORK_BUDGET (see mergeCost; about 40 ms of work), reported as one conflict
 * whole: coarser, never wrong.
 */
export const WORK_BUDGET = 5_000_000;

export interface LineRange {
  /** 1-based number of the first line; for an empty range, the number the next line has. */
  start: number;
  /** 1-based number of the last line, inclusive; start - 1 for an empty range. */
  end: number;
  /** The lines themselves, terminators included: exactly that part of the text. */
  text: string;
}

export interface Conflict {
  field: 'title' | 'content';
  base: LineRange;
  ours: LineRange;
  theirs: LineRange;
}

export type MergeOutcome = { merged: true; text: string } | { merged: false; conflicts: Conflict[] };

/** Splits into lines that keep their terminators; the empty text has no lines. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * node-diff3's cost for a piece, as an upper bound of its steps: each of its two searches (base
 * against ours, base against theirs) looks at every pair of equal lines, and for each it may scan
 * all the candidates kept so far (at most the shorter text's lines). Unique lines make that about
 * n², a few lines repeated throughout (blank lines, "---") up to n³.
 */
function mergeCost(
  o: string[],
  os: number,
  oe: number,
  a: string[],
  as: number,
  ae: number,
  b: string[],
  bs: number,
  be: number,
): number {
  const inBase = new Map<string, number>();
  for (let i = os; i < oe; i += 1) inBase.set(o[i]!, (inBase.get(o[i]!) ?? 0) + 1);
  const pairs = (x: string[], from: number, to: number) => {
    let n = 0;
    for (let i = from; i < to; i += 1) n += inBase.get(x[i]!) ?? 0;
    return n;
  };
  return pairs(a, as, ae) * (Math.min(oe - os, ae - as) + 1) + pairs(b, bs, be) * (Math.min(oe - os, be - bs) + 1);
}

/** Whether x[xs, xe) and y[ys, ye) are the same lines. */
function same(x: string[], xs: number, xe: number, y: string[], ys: number, ye: number): boolean {
  if (xe - xs !== ye - ys) return false;
  for (let i = 0; i < xe - xs; i += 1) if (x[xs + i] !== y[ys + i]) return false;
  return true;
}

function append(out: string[], lines: string[], from: number, to: number): void {
  for (let i = from; i < to; i += 1) out.push(lines[i]!);
}

const range = (lines: string[], from: number, count: number): LineRange => ({
  start: from + 1,
  end: from + count,
  text: lines.slice(from, from + count).join(''),
});

/** A title is one line: only one side's change is taken; two different changes conflict. */
export function mergeTitle(
  base: string,
  ours: string,
  theirs: string,
): { merged: true; title: string } | { merged: false; conflict: Conflict } {
  if (ours === theirs || theirs === base) return { merged: true, title: ours };
  if (ours === base) return { merged: true, title: theirs };
  const line = (text: string): LineRange => ({ start: 1, end: 1, text });
  return { merged: false, conflict: { field: 'title', base: line(base), ours: line(ours), theirs: line(theirs) } };
}

export function mergeContent(base: string, ours: string, theirs: string, budget = WORK_BUDGET): MergeOutcome {
  if (ours === theirs || theirs === base) return { merged: true, text: ours };
  if (ours === base) return { merged: true, text: theirs };
  const o = splitLines(base);
  const a = splitLines(ours);
  const b = splitLines(theirs);

  // Lines common to all three at the start and at the end.
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

  const out: string[] = o.slice(0, head);
  const conflicts: Conflict[] = [];
  const anchors = anchorsOf(o, a, b, head, tail);
  let [oi, ai, bi] = [head, head, head];
  const ends: [number, number, number][] = [...anchors, [o.length - tail, a.length - tail, b.length - tail]];
  for (const [oe, ae, be] of ends) {
    /** The piece as one conflict, whole: coarser, never wrong. */
    const whole = (): Conflict => ({
      field: 'content',
      base: range(o, oi, oe - oi),
      ours: range(a, ai, ae - ai),
      theirs: range(b, bi, be - bi),
    });
    if (same(a, ai, ae, o, oi, oe) || same(a, ai, ae, b, bi, be)) append(out, b, bi, be);
    else if (same(b, bi, be, o, oi, oe)) append(out, a, ai, ae);
    else if (mergeCost(o, oi, oe, a, ai, ae, b, bi, be) > budget) conflicts.push(whole());
    else {
      const regions = diff3Merge(a.slice(ai, ae), o.slice(oi, oe), b.slice(bi, be), { excludeFalseConflicts: true });
      if (!agreesReversed(regions, o.slice(oi, oe), a.slice(ai, ae), b.slice(bi, be))) conflicts.push(whole());
      else
        for (const region of regions) {
          if (region.ok !== undefined) append(out, region.ok, 0, region.ok.length);
          else if (region.conflict !== undefined) {
            const c = region.conflict;
            conflicts.push({
              field: 'content',
              base: range(o, oi + c.oIndex, c.o.length),
              ours: range(a, ai + c.aIndex, c.a.length),
              theirs: range(b, bi + c.bIndex, c.b.length),
            });
          }
        }
    }
    // The anchor itself (the last end is the common tail's start, not an anchor).
    if (oe < o.length - tail) out.push(o[oe]!);
    [oi, ai, bi] = [oe + 1, ae + 1, be + 1];
  }
  if (conflicts.length > 0) return { merged: false, conflicts };
  for (let i = o.length - tail; i < o.length; i += 1) out.push(o[i]!);
  return { merged: true, text: out.join('') };
}

/**
 * Whether a clean merge of a piece is the one the same merge finds on the lines reversed. Where lines
 * repeat (checklists, blank lines, rules), a side's diff can be aligned several ways: an edit of the
 * first of three identical lines read as "insert, and delete the third", and the other side's
 * deletion of that third then looked made by both and was merged once: lost, with no conflict. Run
 * backwards, such ties fall the other way; a piece whose two runs do not give the same clean text is
 * a conflict, whole. A merge with conflicts is kept as it is (it already says so).
 */
function agreesReversed(
  regions: ReturnType<typeof diff3Merge<string>>,
  o: string[],
  a: string[],
  b: string[],
): boolean {
  if (regions.some((region) => region.conflict !== undefined)) return true;
  const backwards = diff3Merge([...a].reverse(), [...o].reverse(), [...b].reverse(), { excludeFalseConflicts: true });
  if (backwards.some((region) => region.conflict !== undefined)) return false;
  const forward = regions.flatMap((region) => region.ok ?? []);
  const reversed = backwards.flatMap((region) => region.ok ?? []).reverse();
  return forward.length === reversed.length && forward.every((line, i) => line === reversed[i]);
}

/**
 * Positions [base, ours, theirs] of lines that occur exactly once in each text's middle (between
 * the common head and tail), in increasing order in all three: a longest such chain by base order,
 * first kept increasing in ours, then in theirs.
 */
function anchorsOf(o: string[], a: string[], b: string[], head: number, tail: number): [number, number, number][] {
  const seen = new Map<string, [number, number, number]>();
  const count = (lines: string[], side: 0 | 1 | 2) => {
    for (let i = head; i < lines.length - tail; i += 1) {
      const line = lines[i]!;
      let at = seen.get(line);
      if (at === undefined) seen.set(line, (at = [-1, -1, -1]));
      // -1: not seen yet; -2: seen more than once.
      at[side] = at[side] === -1 ? i : -2;
    }
  };
  count(o, 0);
  count(a, 1);
  count(b, 2);
  const unique: [number, number, number][] = [];
  for (let i = head; i < o.length - tail; i += 1) {
    const at = seen.get(o[i]!)!;
    if (at[0] >= 0 && at[1] >= 0 && at[2] >= 0) unique.push(at);
  }
  return increasing(increasing(unique, 1), 2);
}

/** A longest subsequence of `items` (kept in their order) whose `key` position increases. */
function increasing(items: [number, number, number][], key: 1 | 2): [number, number, number][] {
  const tops: number[] = []; // index into items of the smallest tail of each length
  const previous = new Array<number>(items.length);
  for (let i = 0; i < items.length; i += 1) {
    const value = items[i]![key];
    let lo = 0;
    let hi = tops.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (items[tops[mid]!]![key] < value) lo = mid + 1;
      else hi = mid;
    }
    previous[i] = lo > 0 ? tops[lo - 1]! : -1;
    tops[lo] = i;
  }
  const chain: [number, number, number][] = [];
  for (let i = tops.length > 0 ? tops[tops.length - 1]! : -1; i !== -1; i = previous[i]!) chain.push(items[i]!);
  return chain.reverse();
}
