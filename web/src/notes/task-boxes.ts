/**
 * Task list boxes ticked in the rendered note (issue #42): the rendered boxes are matched, in order,
 * with the `[ ]` / `[x]` of the text's task items, found line by line as GFM finds them (quotes and
 * nested lists included, fenced code left out). Where the two counts differ (raw HTML with its own
 * boxes, an indented code block that looks like a task), the box is not matched to a guess: the
 * caller says to tick it in the editor instead.
 */

// Quote markers and list indentation, a list marker, then the box and the task's first word.
const TASK = /^((?: {0,3}>[ \t]?)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[([ xX])\](?=[ \t]+\S)/;
const QUOTES = /^(?: {0,3}>[ \t]?)*/;
// A fence opens a code block (also as a list item's first line); a backtick fence's info has no backtick.
const FENCE = /^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})(.*)$/;

/** Where the box's mark (the space or x between the brackets) is in `text`, for each task item in order. */
export function taskMarks(text: string): number[] {
  const marks: number[] = [];
  let fence: string | null = null;
  let at = 0;
  for (const line of text.split('\n')) {
    const inner = line.slice(QUOTES.exec(line)?.[0].length ?? 0);
    const opening = FENCE.exec(inner);
    if (fence !== null) {
      // A fence closes with at least as many of the same character and nothing after them.
      const closing = /^[ \t]*(`{3,}|~{3,})[ \t]*$/.exec(inner);
      if (closing?.[1] !== undefined && closing[1][0] === fence[0] && closing[1].length >= fence.length) fence = null;
    } else if (opening?.[1] !== undefined && !(opening[1][0] === '`' && opening[2]?.includes('`'))) {
      fence = opening[1];
    } else {
      const task = TASK.exec(line);
      if (task?.[1] !== undefined) marks.push(at + task[1].length + 1);
    }
    at += line.length + 1;
  }
  return marks;
}

/**
 * The text with the `index`-th task box ticked or cleared, or null when the rendered boxes
 * (`shown` of them) cannot be matched with the text's task items.
 */
export function setTask(text: string, index: number, done: boolean, shown: number): string | null {
  const marks = taskMarks(text.replace(/\r\n?/g, (m) => (m.length === 2 ? ' \n' : '\n')));
  const mark = marks[index];
  if (marks.length !== shown || mark === undefined) return null;
  return `${text.slice(0, mark)}${done ? 'x' : ' '}${text.slice(mark + 1)}`;
}
