import { diffArrays } from 'diff';

export type LineOp = '=' | '-' | '+';

export interface DiffLine {
  op: LineOp;
  text: string;
}

export interface Hunk {
  from_start: number;
  from_lines: number;
  to_start: number;
  to_lines: number;
  lines: DiffLine[];
}

export interface TextDiff {
  stats: { added: number; removed: number };
  /** False when the edit budget ran out and changed regions were replaced whole. */
  complete: boolean;
  hunks: Hunk[];
  /** The hunks as `diff -u` prints them, without the ---/+++ header; '' when nothing changed. */
  body: string;
}

/**
 * Myers' algorithm (jsdiff) costs O((N+M)·D) for D edits. Two guards keep any pair of 1 MiB texts
 * cheap: the texts are first cut at anchors — lines that occur exactly once in each text, in the
 * same order (patience diff) — so a long note with many scattered edits becomes many small
 * problems; regions with no line in common are replaced outright (that is exact); and the others
 * get at most EDIT_BUDGET edits each and the whole diff at most TIME_BUDGET_MS of search before a
 * region is replaced whole (`complete: false`).
 */
export const EDIT_BUDGET = 1000;
export const TIME_BUDGET_MS = 100;

/** Lines with their terminator, so that "a" (last line, no newline) and "a\n" differ as `diff` sees it. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  const last = lines.pop()!;
  const tokens = lines.map((line) => `${line}\n`);
  if (last !== '') tokens.push(last);
  return tokens;
}


/** Pairs (i, j) of lines unique in a and in b with a[i] === b[j], longest increasing run in j. */
function anchors(a: number[], b: number[]): Array<[number, number]> {
  const countA = new Map<number, number>();
  const countB = new Map<number, number>();
  const posB = new Map<number, number>();
  for (const x of a) countA.set(x, (countA.get(x) ?? 0) + 1);
  b.forEach((x, j) => {
    countB.set(x, (countB.get(x) ?? 0) + 1);
    posB.set(x, j);
  });
  const pairs: Array<[number, number]> = [];
  a.forEach((x, i) => {
    if (countA.get(x) === 1 && countB.get(x) === 1) pairs.push([i, posB.get(x)!]);
  });
  // Longest increasing subsequence of j by patience sorting.
  const tails: number[] = [];
  const previous: number[] = new Array<number>(pairs.length);
  for (let p = 0; p < pairs.length; p += 1) {
    const j = pairs[p]![1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tails[mid]!]![1] < j) lo = mid + 1;
      else hi = mid;
    }
    previous[p] = lo > 0 ? tails[lo - 1]! : -1;
    tails[lo] = p;
  }
  const run: Array<[number, number]> = [];
  for (let p = tails.length > 0 ? tails[tails.length - 1]! : -1; p >= 0; p = previous[p]!) run.push(pairs[p]!);
  return run.reverse();
}

/**
 * The edit script between two texts, line by line. Lines become small integers first (one Map
 * look-up per line) so the search compares numbers.
 */
function editScript(from: string[], to: string[]): { ops: Uint8Array; refs: Int32Array; length: number; complete: boolean } {
  const ids = new Map<string, number>();
  const id = (line: string) => {
    let n = ids.get(line);
    if (n === undefined) ids.set(line, (n = ids.size));
    return n;
  };
  const a = from.map(id);
  const b = to.map(id);
  // The script as two parallel arrays (op, and the line's index in `from` or `to`): a million
  // small objects for two unrelated 1 MiB texts would cost more in garbage collection than the diff.
  const ops = new Uint8Array(a.length + b.length);
  const refs = new Int32Array(a.length + b.length);
  let length = 0;
  const push = (op: number, ref: number) => {
    ops[length] = op;
    refs[length] = ref;
    length += 1;
  };
  const deadline = performance.now() + TIME_BUDGET_MS;
  let complete = true;

  // Two regions without a common line: deleting one and inserting the other is the exact diff.
  const disjoint = (a0: number, a1: number, b0: number, b1: number) => {
    if (a0 === a1 || b0 === b1) return true;
    const seen = new Set<number>();
    for (let i = a0; i < a1; i += 1) seen.add(a[i]!);
    for (let j = b0; j < b1; j += 1) if (seen.has(b[j]!)) return false;
    return true;
  };
  const search = (a0: number, a1: number, b0: number, b1: number) => {
    const remaining = deadline - performance.now();
    const changes = remaining <= 0
      ? undefined
      : diffArrays(a.slice(a0, a1), b.slice(b0, b1), { maxEditLength: EDIT_BUDGET, timeout: remaining });
    if (changes === undefined) complete = false;
    return changes;
  };

  const region = (a0: number, a1: number, b0: number, b1: number) => {
    while (a0 < a1 && b0 < b1 && a[a0] === b[b0]) push(EQUAL, a0++), (b0 += 1);
    let tail = 0;
    while (a1 - tail > a0 && b1 - tail > b0 && a[a1 - 1 - tail] === b[b1 - 1 - tail]) tail += 1;
    a1 -= tail;
    b1 -= tail;
    const changes = disjoint(a0, a1, b0, b1) ? undefined : search(a0, a1, b0, b1);
    if (changes === undefined) {
      // Nothing in common (then this is exact), or the budget ran out: the region is replaced whole.
      for (let i = a0; i < a1; i += 1) push(REMOVE, i);
      for (let j = b0; j < b1; j += 1) push(ADD, j);
    } else {
      // jsdiff may put an insertion before a deletion; diff -u prints a block's deletions first.
      let removed: number[] = [];
      let added: number[] = [];
      const flush = () => {
        for (const i of removed) push(REMOVE, i);
        for (const j of added) push(ADD, j);
        removed = [];
        added = [];
      };
      let i = a0;
      let j = b0;
      for (const change of changes) {
        const count = change.count ?? change.value.length;
        if (change.removed) {
          for (let k = 0; k < count; k += 1) removed.push(i++);
        } else if (change.added) {
          for (let k = 0; k < count; k += 1) added.push(j++);
        } else {
          flush();
          for (let k = 0; k < count; k += 1) push(EQUAL, i++), (j += 1);
        }
      }
      flush();
    }
    for (let i = a1; i < a1 + tail; i += 1) push(EQUAL, i);
  };

  let i = 0;
  let j = 0;
  for (const [ai, bj] of anchors(a, b)) {
    region(i, ai, j, bj);
    push(EQUAL, ai);
    i = ai + 1;
    j = bj + 1;
  }
  region(i, a.length, j, b.length);
  return { ops, refs, length, complete };
}

const EQUAL = 0;
const REMOVE = 1;
const ADD = 2;
const SYMBOL: readonly LineOp[] = ['=', '-', '+'];
const PREFIX = [' ', '-', '+'];

const NO_NEWLINE = '\\ No newline at end of file\n';

/** `diff -u`'s range: "start,count", ",1" left out, and an empty range names the line before it. */
function range(start: number, count: number): string {
  if (count === 1) return String(start);
  return `${count === 0 ? start - 1 : start},${count}`;
}

/**
 * Diffs two texts the way `diff -u` does: hunks of changes with `context` unchanged lines around
 * them, hunks whose contexts would touch or overlap merged into one.
 */
export function diffTexts(from: string, to: string, context: number): TextDiff {
  const fromLines = splitLines(from);
  const toLines = splitLines(to);
  const { ops, refs, length, complete } = editScript(fromLines, toLines);
  const hunks: Hunk[] = [];
  const body: string[] = [];
  let added = 0;
  let removed = 0;
  // Line numbers (1-based) in each text of the edit at `at`, advanced as the scan moves on.
  let at = 0;
  let fromLine = 1;
  let toLine = 1;
  const advanceTo = (target: number) => {
    for (; at < target; at += 1) {
      if (ops[at] !== ADD) fromLine += 1;
      if (ops[at] !== REMOVE) toLine += 1;
    }
  };
  let k = 0;
  while (k < length) {
    if (ops[k] === EQUAL) {
      k += 1;
      continue;
    }
    // A hunk runs from `context` lines before this change to `context` lines after the last
    // change that is followed by at most 2·context unchanged lines before the next one.
    const start = Math.max(0, k - context);
    let end = k;
    for (;;) {
      while (end < length && ops[end] !== EQUAL) end += 1;
      let next = end;
      while (next < length && ops[next] === EQUAL) next += 1;
      if (next < length && next - end <= 2 * context) end = next;
      else break;
    }
    const stop = Math.min(length, end + context);
    advanceTo(start);
    const fromStart = fromLine;
    const toStart = toLine;
    const lines: DiffLine[] = [];
    const text: string[] = [];
    let fromCount = 0;
    let toCount = 0;
    for (let e = start; e < stop; e += 1) {
      const op = ops[e]!;
      const line = op === ADD ? toLines[refs[e]!]! : fromLines[refs[e]!]!;
      const newline = line.endsWith('\n');
      lines.push({ op: SYMBOL[op]!, text: newline ? line.slice(0, -1) : line });
      text.push(PREFIX[op]! + line + (newline ? '' : `\n${NO_NEWLINE}`));
      if (op !== ADD) fromCount += 1;
      if (op !== REMOVE) toCount += 1;
      if (op === ADD) added += 1;
      if (op === REMOVE) removed += 1;
    }
    hunks.push({
      from_start: fromCount === 0 ? fromStart - 1 : fromStart,
      from_lines: fromCount,
      to_start: toCount === 0 ? toStart - 1 : toStart,
      to_lines: toCount,
      lines,
    });
    body.push(`@@ -${range(fromStart, fromCount)} +${range(toStart, toCount)} @@\n`, text.join(''));
    k = stop;
  }
  return { stats: { added, removed }, complete, hunks, body: body.join('') };
}

/** The diff's members of the GET /notes/{id}/diff answer, as JSON; `unified` gets `header` when not empty. */
export function diffJson(from: string, to: string, context: number, header: string): string {
  const { stats, complete, hunks, body } = diffTexts(from, to, context);
  return JSON.stringify({ stats, complete, hunks, unified: body === '' ? '' : header + body });
}
