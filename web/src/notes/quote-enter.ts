import { syntaxTree } from '@codemirror/language';
import type { StateCommand } from '@codemirror/state';

/** A line that is quote markup only: `>`, `> `, `> >` … and nothing typed after it. */
const EMPTY_QUOTE_LINE = /^( {0,3}>(?:[ \t]?>)*)[ \t]*$/;

/**
 * Enter on an empty quote line ends the quote, as Enter on an empty list item ends the list: the
 * second Enter of "> words⏎⏎" leaves the quote. (lang-markdown's own Enter would start a new
 * paragraph inside it and end it only at the third.) The line's `>` goes and a blank line follows,
 * so the next words are not read as the quote running on. In a quote inside a quote, one level ends.
 * Elsewhere (text in the line, code, a selection) it does nothing and the Markdown keymap answers.
 */
export const endQuoteOnEmptyLine: StateCommand = ({ state, dispatch }) => {
  const range = state.selection.main;
  if (state.selection.ranges.length !== 1 || !range.empty) return false;
  const line = state.doc.lineAt(range.head);
  const markup = EMPTY_QUOTE_LINE.exec(line.text);
  if (markup === null || range.head !== line.to || line.number === 1) return false;
  // Only the second Enter: the line above has words in the same quote (two empty `>` lines in a
  // row are lang-markdown's to close).
  const above = state.doc.line(line.number - 1);
  if (!/^ {0,3}>/.test(above.text) || EMPTY_QUOTE_LINE.test(above.text)) return false;
  for (let node = syntaxTree(state).resolveInner(line.from, 1); node.parent !== null; node = node.parent) {
    if (/Code|HTML/.test(node.name)) return false;
  }
  const levels = markup[1]!.replace(/[ \t]/g, '').length;
  const outer = levels > 1 ? `${'> '.repeat(levels - 1).trimEnd()}` : '';
  const insert = levels > 1 ? `${outer}\n${outer} ` : '\n';
  dispatch(
    state.update({
      changes: { from: line.from, to: line.to, insert },
      selection: { anchor: line.from + insert.length },
      scrollIntoView: true,
      userEvent: 'input',
    }),
  );
  return true;
};
