// The note's text (web/src/notes/note-text.ts) lives in the editor once one is attached, and is
// held, readable, before and after: a draft can be written as the editor goes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoteText, type TextSource } from '../src/notes/note-text.js';

function fakeEditor(start: string): TextSource & { doc: string; reads: number } {
  const editor = {
    doc: start,
    reads: 0,
    get: () => {
      editor.reads++;
      return editor.doc;
    },
    same: (text: string) => editor.doc.length === text.length && editor.get() === text,
    set: (text: string) => {
      editor.doc = text;
    },
    apply: (from: string, to: string) => {
      if (editor.doc === from) editor.doc = to;
    },
  };
  return editor;
}

describe('NoteText', () => {
  it('holds the text until an editor is attached, then reads and writes the editor', () => {
    const text = new NoteText('first');
    assert.equal(text.get(), 'first');
    text.set('loaded');
    assert.ok(text.same('loaded'));
    const editor = fakeEditor(text.get());
    text.attach(editor);
    editor.doc = 'typed';
    assert.equal(text.get(), 'typed');
    assert.ok(!text.same('loaded'));
    text.set('taken from the server');
    assert.equal(editor.doc, 'taken from the server');
  });

  it('compares without reading the text out when the lengths differ', () => {
    const text = new NoteText();
    const editor = fakeEditor('a long text typed');
    text.attach(editor);
    assert.equal(text.same('short'), false);
    assert.equal(editor.reads, 0);
  });

  it('keeps what the editor held once it is detached, and ignores a stale detach', () => {
    const text = new NoteText('');
    const old = fakeEditor('old');
    const current = fakeEditor('unsaved words');
    text.attach(old);
    text.attach(current);
    text.detach(old);
    assert.equal(text.get(), 'unsaved words');
    text.detach(current);
    current.doc = 'changed after it went';
    assert.equal(text.get(), 'unsaved words');
  });
});
