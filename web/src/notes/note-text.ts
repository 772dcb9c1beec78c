import { useRef, useState } from 'preact/hooks';

/** Where the note's text lives while it is edited: CodeMirror, or the plain box until it loads. */
export interface TextSource {
  get(): string;
  /** Whether the text is `text`, without copying it out when the lengths differ. */
  same(text: string): boolean;
  set(text: string): void;
  /** Brings in the change `from` → `to` (a merged save) over what was typed since `from`. */
  apply(from: string, to: string): void;
}

/**
 * The note's text. The editor owns it (CodeMirror, as its own examples advise: state lives in the
 * editor, the app reads it when it needs it): nothing is copied into component state as the user
 * types. Until an editor is attached (the note is loading, or the caller may only read it) and
 * after it is gone, the text is held here.
 */
export class NoteText {
  private source: TextSource | null = null;
  constructor(private held = '') {}

  get(): string {
    return this.source?.get() ?? this.held;
  }

  same(text: string): boolean {
    return this.source === null ? this.held === text : this.source.same(text);
  }

  /** Replaces the text (a version loaded, a draft restored): the editor shows it, undo history kept. */
  set(text: string): void {
    if (this.source === null) this.held = text;
    else this.source.set(text);
  }

  /** A save came back merged with changes made elsewhere: they join the text, keeping the cursor. */
  apply(from: string, to: string): void {
    if (this.source !== null) this.source.apply(from, to);
    else if (this.held === from) this.held = to;
  }

  attach(source: TextSource): void {
    this.source = source;
  }

  /** The editor goes: what it held stays readable (a draft written as the page goes). */
  detach(source: TextSource): void {
    if (this.source !== source) return;
    this.held = source.get();
    this.source = null;
  }
}

/**
 * The note's text and a counter of its edits: the counter (not the text) is what re-renders the
 * editor and re-arms its timers as the user types.
 */
export function useNoteText(initial: string): { text: NoteText; edits: number; edited: () => void } {
  const text = useRef<NoteText | null>(null);
  text.current ??= new NoteText(initial);
  const [edits, setEdits] = useState(0);
  const edited = useRef(() => setEdits((n) => n + 1)).current;
  return { text: text.current, edits, edited };
}
