import { diffArrays } from 'diff';

type LineOp = '=' | '-' | '+';

/**
 * Myers' algorithm (jsdiff) costs O((N+M)·D) for D edits. Three guards keep any pair of 1 MiB texts
 * cheap: the texts are first cut at anchors — lines that occur exactly once in each text, in the
 * same order (patience diff) — so a long note with many scattered edits becomes many small
 * problems; regions with no line in common are replaced outright (that is exact); and the search
 * in the others is bounded by work, not time: at most EDIT_LIMIT edits per region and WORK_BUDGET
 * line comparisons for the whole diff. A region whose search runs out is replaced whole
 * (`complete: false`), and so is every region after the budget is spent. Counting work rather
 * than milliseconds makes the answer a function of the two texts alone: the same request always
 * gets the same diff, however busy the machine is.
 */
export const EDIT_LIMIT = 1000;
export const WORK_BUDGET = 1_000_000;

/**
 * Lines listed in an answer's hunks, at most (context lines included). An exact diff of two
 * unrelated 1 MiB texts of one-character lines has a million lines, 27 MB of JSON; past this
 * limit the hunks stop (the last one cut short, its header counting what it lists) and
 * `complete` is false, while `stats` still counts every added and removed line.
 */
export const OUTPUT_LINE_LIMIT = 50_000;

/** A text's lines without their terminators; `open` when the last one has none ("a" is not "a\n" to `diff`). */
interface Lines {
  text: string[];
  open: boolean;
}

function splitLines(text: string): Lines {
  if (text === '') return { text: [], open: false };
  const lines = text.split('\n');
  const last = lines.pop()!;
  if (last === '') return { text: lines, open: false };
  lines.push(last);
  return { text: lines, open: true };
}

/**
 * Pairs (a[i], b[j]) of lines unique in a and in b with a[i] === b[j], the longest run increasing
 * in j, as two arrays. Line ids are below `count`, so counts are arrays rather than maps.
 */
function anchors(a: Int32Array, b: Int32Array, count: number): { ai: Int32Array; bj: Int32Array } {
  const countA = new Int32Array(count);
  const countB = new Int32Array(count);
  const posB = new Int32Array(count);
  for (const x of a) countA[x]! += 1;
  for (let j = 0; j < b.length; j += 1) {
    countB[b[j]!]! += 1;
    posB[b[j]!] = j;
  }
  const pairI: number[] = [];
  const pairJ: number[] = [];
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i]!;
    if (countA[x] === 1 && countB[x] === 1) pairI.push(i), pairJ.push(posB[x]!);
  }
  // Longest increasing subsequence of j by patience sorting.
  const tails: number[] = [];
  const previous = new Int32Array(pairJ.length);
  for (let p = 0; p < pairJ.length; p += 1) {
    const j = pairJ[p]!;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairJ[tails[mid]!]! < j) lo = mid + 1;
      else hi = mid;
    }
    previous[p] = lo > 0 ? tails[lo - 1]! : -1;
    tails[lo] = p;
  }
  const ai = new Int32Array(tails.length);
  const bj = new Int32Array(tails.length);
  for (
    let p = tails.length > 0 ? tails[tails.length - 1]! : -1, n = tails.length - 1;
    p >= 0;
    p = previous[p]!, n -= 1
  ) {
    ai[n] = pairI[p]!;
    bj[n] = pairJ[p]!;
  }
  return { ai, bj };
}

/**
 * The edit script between two texts, line by line. Lines become small integers first (one Map
 * look-up per line) so the search compares numbers.
 */
function editScript(from: Lines, to: Lines): { ops: Uint8Array; refs: Int32Array; length: number; complete: boolean } {
  const ids = new Map<string, number>();
  const openIds = new Map<string, number>();
  let count = 0;
  const number = (lines: Lines) => {
    const out = new Int32Array(lines.text.length);
    lines.text.forEach((line, i) => {
      const map = lines.open && i === lines.text.length - 1 ? openIds : ids;
      let n = map.get(line);
      if (n === undefined) map.set(line, (n = count++));
      out[i] = n;
    });
    return out;
  };
  const a = number(from);
  const b = number(to);
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
  let work = WORK_BUDGET;
  let complete = true;

  // Two regions without a common line: deleting one and inserting the other is the exact diff.
  // `seen[id] === stamp` marks the ids of the region being checked (one array for all regions).
  const seen = new Int32Array(count);
  let stamp = 0;
  const disjoint = (a0: number, a1: number, b0: number, b1: number) => {
    if (a0 === a1 || b0 === b1) return true;
    stamp += 1;
    for (let i = a0; i < a1; i += 1) seen[a[i]!] = stamp;
    for (let j = b0; j < b1; j += 1) if (seen[b[j]!] === stamp) return false;
    return true;
  };
  const search = (a0: number, a1: number, b0: number, b1: number) => {
    if (work <= 0) {
      complete = false;
      return undefined;
    }
    let spent = 0;
    const limit = work;
    let changes: ReturnType<typeof diffArrays<number>> | undefined;
    try {
      // jsdiff copies its inputs and only indexes them: typed arrays serve as well as arrays.
      changes = diffArrays(a.subarray(a0, a1) as unknown as number[], b.subarray(b0, b1) as unknown as number[], {
        maxEditLength: EDIT_LIMIT,
        // Every step of the search compares two lines: counting them is counting the work.
        comparator: (x, y) => {
          if (++spent > limit) throw OUT_OF_WORK;
          return x === y;
        },
      });
    } catch (error) {
      if (error !== OUT_OF_WORK) throw error;
      changes = undefined;
    }
    work -= Math.min(spent, limit);
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
  const { ai, bj } = anchors(a, b, count);
  for (let n = 0; n < ai.length; n += 1) {
    region(i, ai[n]!, j, bj[n]!);
    push(EQUAL, ai[n]!);
    i = ai[n]! + 1;
    j = bj[n]! + 1;
  }
  region(i, a.length, j, b.length);
  return { ops, refs, length, complete };
}

/** Thrown out of jsdiff's search when the budget is spent (jsdiff has no other way to stop on a count). */
const OUT_OF_WORK = new Error('diff work budget spent');

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
 * them, hunks whose contexts would touch or overlap merged into one. Returns the diff's members of
 * the GET /notes/{id}/diff answer as JSON, `{stats, complete, hunks, unified}` (`unified` with
 * `header` when not empty), written line by line rather than built as objects and stringified: a
 * diff can list 100,000 lines, and a small object for each costs more than the diff.
 */
export function diffJson(from: string, to: string, context: number, header: string): string {
  const fromLines = splitLines(from);
  const toLines = splitLines(to);
  const script = editScript(fromLines, toLines);
  const { ops, refs, length } = script;
  let complete = script.complete;
  const hunks: string[] = [];
  const body: string[] = [];
  let listed = 0;
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
    if (listed === OUTPUT_LINE_LIMIT) {
      complete = false;
      break;
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
    let stop = Math.min(length, end + context);
    if (stop - start > OUTPUT_LINE_LIMIT - listed) {
      stop = start + OUTPUT_LINE_LIMIT - listed;
      complete = false;
    }
    listed += stop - start;
    advanceTo(start);
    const fromStart = fromLine;
    const toStart = toLine;
    const lines: string[] = [];
    const text: string[] = [];
    let fromCount = 0;
    let toCount = 0;
    for (let e = start; e < stop; e += 1) {
      const op = ops[e]!;
      const side = op === ADD ? toLines : fromLines;
      const line = side.text[refs[e]!]!;
      const open = side.open && refs[e] === side.text.length - 1;
      lines.push(`{"op":"${SYMBOL[op]!}","text":${JSON.stringify(line)}}`);
      text.push(`${PREFIX[op]!}${line}\n${open ? NO_NEWLINE : ''}`);
      if (op !== ADD) fromCount += 1;
      if (op !== REMOVE) toCount += 1;
    }
    hunks.push(
      `{"from_start":${fromCount === 0 ? fromStart - 1 : fromStart},"from_lines":${fromCount},` +
        `"to_start":${toCount === 0 ? toStart - 1 : toStart},"to_lines":${toCount},"lines":[${lines.join(',')}]}`,
    );
    body.push(`@@ -${range(fromStart, fromCount)} +${range(toStart, toCount)} @@\n`, text.join(''));
    k = stop;
  }
  // Every change counts, listed or not.
  let added = 0;
  let removed = 0;
  for (let e = 0; e < length; e += 1) {
    if (ops[e] === ADD) added += 1;
    else if (ops[e] === REMOVE) removed += 1;
  }
  const unified = body.length === 0 ? '' : header + body.join('');
  return `{"stats":{"added":${added},"removed":${removed}},"complete":${complete},"hunks":[${hunks.join(',')}],"unified":${JSON.stringify(unified)}}`;
}
