import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertNewlineContinueMarkup, markdownLanguage } from '@codemirror/lang-markdown';
import { ensureSyntaxTree, LanguageSupport } from '@codemirror/language';
import { EditorSelection, EditorState, type StateCommand } from '@codemirror/state';
import { endQuoteOnEmptyLine } from '../src/notes/quote-enter.ts';

/** Enter as the editor binds it: the quote rule first, then lang-markdown's. */
function enter(doc: string, times: number): string {
  let state = EditorState.create({
    doc,
    selection: EditorSelection.cursor(doc.length),
    extensions: [new LanguageSupport(markdownLanguage)],
  });
  const run = (command: StateCommand) => {
    ensureSyntaxTree(state, state.doc.length, 5000);
    return command({
      state,
      dispatch: (tr) => {
        state = tr.state;
      },
    });
  };
  for (let i = 0; i < times; i++) {
    if (!run(endQuoteOnEmptyLine) && !run(insertNewlineContinueMarkup)) {
      state = state.update(state.replaceSelection('\n')).state;
    }
  }
  return `${state.doc.toString()}|${state.doc.length - state.selection.main.head}`;
}

test('Enter twice after a quoted line ends the quote, with a blank line after it', () => {
  assert.equal(enter('> words', 1), '> words\n> |0');
  assert.equal(enter('> words', 2), '> words\n\n|0');
  assert.equal(enter('x\n\n> one\n> two', 2), 'x\n\n> one\n> two\n\n|0');
});

test('a quote inside a quote ends one level', () => {
  assert.equal(enter('> > deep', 2), '> > deep\n>\n> |0');
});

test('lists, code and plain text keep their own Enter', () => {
  assert.equal(enter('- a', 1), '- a\n- |0');
  assert.equal(enter('```\n> words\n> ', 1), '```\n> words\n> \n|0');
  assert.equal(enter('plain', 1), 'plain\n|0');
});
