import {
  autocompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
} from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { markdownKeymap, markdownLanguage, pasteURLAsLink } from '@codemirror/lang-markdown';
import {
  forceParsing,
  HighlightStyle,
  LanguageSupport,
  syntaxHighlighting,
  syntaxTreeAvailable,
} from '@codemirror/language';
import { Compartment, EditorSelection, EditorState, Prec, Transaction, type Extension } from '@codemirror/state';
import { EditorView, keymap, ViewPlugin, type ViewUpdate } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { endQuoteOnEmptyLine } from './quote-enter';
import { changesBetween, changesOnto } from './text-changes';

/**
 * The Markdown editor proper, loaded on demand (markdown-editor.tsx imports this module
 * dynamically) so the first screen does not carry CodeMirror.
 *
 * Tab indents (a list item becomes a sub-item) and Shift+Tab outdents (`indentWithTab`), as people
 * expect of a writing surface; Ctrl/Cmd+] and Ctrl/Cmd+[ do the same (the default keymap). The
 * keyboard way out stays CodeMirror's documented escape hatch: Escape, then Tab (or Shift+Tab),
 * moves the focus on; Ctrl+M (Shift+Alt+M on macOS) turns Tab-moves-focus on for good. Enter
 * continues a list (the Markdown keymap).
 */
export interface MarkdownEditorOptions {
  /** The editor lives in this element's shadow root (see below). */
  host: HTMLElement;
  doc: string;
  /** The editing surface's accessible name ("Content"). */
  label: string;
  selection?: { anchor: number; head: number } | undefined;
  /** The text changed (read it with `text()` when needed: it is not copied out on every keystroke). */
  onChange: () => void;
  /** Ctrl/Cmd+S inside the editor. */
  onSave: () => void;
  /** Files pasted or dropped into the text: the editor has put the cursor where they go. */
  onFiles?: (files: File[]) => void;
  /** The editor measured its lines anew (heights of lines it had only guessed, or a new viewport). */
  onLayout?: () => void;
  /** Titles of notes for a `[[link]]` being typed, best first (`typed`: the words after `[[`). */
  noteTitles?: (typed: string, signal: AbortSignal) => Promise<string[]>;
}

export interface MarkdownEditorHandle {
  /** Puts text at the cursor (replacing a selection), as typing would, and keeps the focus there. */
  insert(text: string): void;
  /** The text as it is now. */
  text(): string;
  /** Whether the text is `text` (cheap when the lengths differ, as they mostly do). */
  same(text: string): boolean;
  /**
   * Replaces the text when the app changed it (took the server's version); no-op if equal. Only the
   * lines that differ change, so the cursor stays where it was.
   */
  setText(text: string): void;
  /**
   * Brings in what changed from `from` to `to` (a save merged with changes made elsewhere), over
   * what was typed since `from`: the cursor and that typing stay. Not undone by Undo (not typed here).
   */
  apply(from: string, to: string): void;
  /**
   * Live co-editing (collab.ts): the text becomes `text` (only the lines that differ, the cursor
   * kept, not undoable), then `binding` (y-codemirror.next) joins the editor; null takes it out again.
   */
  collaborate(binding: Extension | null, text?: string): void;
  /** Whether the text takes typing (a live session whose access ended: read only). */
  setEditable(editable: boolean): void;
  focus(): void;
  /** Puts `text` at the very start and the cursor before it, and focuses the editor (Enter in the title). */
  startWith(text: string): void;
  /** The line (from 0, with the fraction of it above `top`) at screen height `top`. */
  lineAt(top: number): number;
  destroy(): void;
}

// Colours come from the page's CSS variables, so the editor follows prefers-color-scheme with the
// rest of the app (styles.css switches the variables) instead of carrying a second theme.
const theme = EditorView.theme({
  '&': { color: 'var(--fg)', backgroundColor: 'var(--panel)', border: '1px solid var(--line)', borderRadius: '6px' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': {
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    fontSize: '0.95rem',
    lineHeight: '1.5',
  },
  '.cm-content': { minHeight: '60vh', padding: '0.45rem 0', caretColor: 'var(--fg)' },
  '.cm-line': { padding: '0 0.6rem' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
  // The `[[` list of note titles, in the page's colours (CodeMirror's own are for a light page only).
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--fg)', border: '1px solid var(--line)' },
  '.cm-tooltip.cm-tooltip-autocomplete > ul': { fontFamily: 'inherit', maxHeight: '12em' },
  '.cm-tooltip.cm-tooltip-autocomplete > ul > li': { padding: '0.25rem 0.6rem' },
  '.cm-tooltip.cm-tooltip-autocomplete > ul > li[aria-selected]': {
    backgroundColor: 'var(--accent) !important',
    color: 'var(--accent-fg) !important',
  },
});

// GFM Markdown without `markdown()`: that helper always brings the HTML, CSS and JavaScript
// parsers along (for HTML inside Markdown), which would triple this chunk for little gain in notes.
// What it adds otherwise is here: Enter continues lists and quotes, Backspace removes their
// markup, and a URL pasted over selected text makes a link.
// Enter on an empty quote line ends the quote (quote-enter.ts), ahead of the Markdown keymap.
const markdownSupport = new LanguageSupport(markdownLanguage, [
  Prec.highest(keymap.of([{ key: 'Enter', run: endQuoteOnEmptyLine }])),
  Prec.high(keymap.of(markdownKeymap)),
  pasteURLAsLink,
]);

/** The words after an open `[[` before the cursor (a `[[link]]` being typed). */
const OPEN_LINK = /\[\[[^[\]|#\n]{0,100}$/;

/**
 * Typing `[[` offers the titles of notes (the most recent ones, then those matching what follows
 * as it is typed); choosing one writes `[[Title]]`. Asked of the server, so no filtering here.
 */
function noteLinkCompletion(titles: NonNullable<MarkdownEditorOptions['noteTitles']>) {
  return async (context: CompletionContext): Promise<CompletionResult | null> => {
    const open = context.matchBefore(OPEN_LINK);
    if (open === null) return null;
    const controller = new AbortController();
    context.addEventListener('abort', () => controller.abort());
    const found = await titles(open.text.slice(2).trim(), controller.signal).catch(() => []);
    if (context.aborted || found.length === 0) return null;
    const closed = context.state.sliceDoc(context.pos, context.pos + 2) === ']]';
    const options: Completion[] = found.map((title) => ({
      label: title,
      type: 'text',
      apply: closed ? title : `${title}]]`,
    }));
    return { from: open.from + 2, options, filter: false };
  };
}

const highlight = HighlightStyle.define([
  { tag: tags.heading1, fontWeight: '700', fontSize: '1.25em' },
  { tag: tags.heading2, fontWeight: '700', fontSize: '1.12em' },
  { tag: [tags.heading3, tags.heading4, tags.heading5, tags.heading6], fontWeight: '700' },
  { tag: tags.strong, fontWeight: '700' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.strikethrough, textDecoration: 'line-through' },
  { tag: tags.link, color: 'var(--accent)', textDecoration: 'underline' },
  { tag: tags.url, color: 'var(--muted)' },
  { tag: tags.quote, color: 'var(--muted)', fontStyle: 'italic' },
  // The markup itself (#, *, `, >, list marks) steps back so the words stand out.
  { tag: [tags.processingInstruction, tags.meta, tags.contentSeparator], color: 'var(--muted)' },
]);

/**
 * CodeMirror parses in the background only up to 100 KB past what is on screen. A long note is
 * parsed to its end here, in idle time and short slices: jumping to the end then finds it parsed,
 * where otherwise each keystroke there parses on (up to 20 ms, before the key is shown) until the
 * parser has caught up with the megabyte before it.
 */
const PARSE_SLICE_MS = 12;
const parseToEnd = ViewPlugin.fromClass(
  class {
    idle = 0;
    constructor(readonly view: EditorView) {
      this.schedule();
    }
    update(update: ViewUpdate) {
      if (update.docChanged) this.schedule();
    }
    schedule() {
      if (this.idle !== 0 || typeof requestIdleCallback !== 'function') return;
      this.idle = requestIdleCallback((deadline) => {
        this.idle = 0;
        const { state } = this.view;
        if (syntaxTreeAvailable(state, state.doc.length)) return;
        forceParsing(this.view, state.doc.length, Math.max(4, Math.min(PARSE_SLICE_MS, deadline.timeRemaining() - 1)));
        this.schedule();
      });
    }
    destroy() {
      if (this.idle !== 0) cancelIdleCallback(this.idle);
    }
  },
);

export function createMarkdownEditor(options: MarkdownEditorOptions): MarkdownEditorHandle {
  const length = options.doc.length;
  const clamp = (n: number) => Math.max(0, Math.min(n, length));
  // CodeMirror injects its styles at run time. In a document it does so with a <style> element,
  // which the page's CSP (style-src 'self', no 'unsafe-inline') refuses; in a shadow root it uses a
  // constructed stylesheet, which CSP allows. The page's colours still reach the editor: CSS
  // custom properties inherit into shadow trees. (An id reference cannot cross the shadow
  // boundary, hence aria-label rather than aria-labelledby.)
  const root = options.host.shadowRoot ?? options.host.attachShadow({ mode: 'open' });
  const live = new Compartment();
  const editable = new Compartment();
  const view = new EditorView({
    parent: root,
    root,
    state: EditorState.create({
      doc: options.doc,
      selection: options.selection
        ? EditorSelection.single(clamp(options.selection.anchor), clamp(options.selection.head))
        : undefined,
      extensions: [
        live.of([]),
        editable.of([]),
        history(),
        markdownSupport,
        parseToEnd,
        syntaxHighlighting(highlight),
        options.noteTitles === undefined
          ? []
          : autocompletion({
              override: [noteLinkCompletion(options.noteTitles)],
              icons: false,
              // Only after `[[`: any other word typed offers nothing.
              activateOnTyping: true,
            }),
        EditorView.lineWrapping,
        theme,
        keymap.of([
          // preventDefault even when a save is already running: the browser's "Save page" must never open.
          {
            key: 'Mod-s',
            preventDefault: true,
            run: () => {
              options.onSave();
              return true;
            },
          },
          ...historyKeymap,
          ...defaultKeymap,
          indentWithTab,
        ]),
        // Files pasted or dropped (an image from the clipboard, a PDF from the desktop) are handed
        // to the app to upload; text pastes and drops stay CodeMirror's.
        EditorView.domEventHandlers({
          paste(event, v) {
            const files = [...(event.clipboardData?.files ?? [])];
            if (files.length === 0 || options.onFiles === undefined) return false;
            event.preventDefault();
            options.onFiles(files);
            return true;
          },
          drop(event, v) {
            const files = [...(event.dataTransfer?.files ?? [])];
            if (files.length === 0 || options.onFiles === undefined) return false;
            event.preventDefault();
            const at = v.posAtCoords({ x: event.clientX, y: event.clientY });
            if (at !== null) v.dispatch({ selection: { anchor: at } });
            options.onFiles(files);
            return true;
          },
        }),
        EditorView.contentAttributes.of({
          'aria-label': options.label,
          spellcheck: 'true',
          autocapitalize: 'sentences',
        }),
        EditorView.updateListener.of((update) => {
          if (update.heightChanged || update.viewportChanged || update.geometryChanged) options.onLayout?.();
          if (update.docChanged) options.onChange();
        }),
      ],
    }),
  });
  return {
    insert(text) {
      view.dispatch(view.state.replaceSelection(text), { scrollIntoView: true, userEvent: 'input' });
      view.focus();
    },
    text: () => view.state.doc.toString(),
    same: (text) => view.state.doc.length === text.length && view.state.doc.toString() === text,
    setText(text) {
      if (view.state.doc.length === text.length && view.state.doc.toString() === text) return;
      view.dispatch({ changes: changesBetween(view.state.doc.toString(), text) });
    },
    apply(from, to) {
      const changes = changesOnto(view.state.doc.toString(), from, to);
      if (!changes.empty) view.dispatch({ changes, annotations: Transaction.addToHistory.of(false) });
    },
    collaborate(binding, text) {
      if (text !== undefined) {
        const changes = changesBetween(view.state.doc.toString(), text);
        if (!changes.empty) view.dispatch({ changes, annotations: Transaction.addToHistory.of(false) });
      }
      view.dispatch({ effects: live.reconfigure(binding ?? []) });
    },
    setEditable(on) {
      view.dispatch({
        effects: editable.reconfigure(on ? [] : [EditorState.readOnly.of(true), EditorView.editable.of(false)]),
      });
    },
    focus: () => view.focus(),
    startWith(text) {
      view.dispatch({
        changes: text === '' ? [] : { from: 0, insert: text },
        selection: { anchor: 0 },
        scrollIntoView: true,
        userEvent: 'input',
      });
      view.focus();
    },
    lineAt(top) {
      const y = top - view.documentTop;
      if (y <= 0) return 0;
      const block = view.lineBlockAtHeight(y);
      const line = view.state.doc.lineAt(block.from).number - 1;
      return line + Math.min(1, Math.max(0, (y - block.top) / Math.max(1, block.height)));
    },
    destroy: () => view.destroy(),
  };
}
