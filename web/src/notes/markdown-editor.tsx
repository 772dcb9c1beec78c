import { useEffect, useRef, useState } from 'preact/hooks';
import { noteTitles } from './api';
import type { MarkdownEditorHandle } from './codemirror';
import type { NoteText, TextSource } from './note-text';

type CodeMirrorModule = typeof import('./codemirror');
let loading: Promise<CodeMirrorModule> | null = null;

/** CodeMirror arrives in its own chunk on first use; a failed load may be tried again later. */
export function loadCodeMirror(): Promise<CodeMirrorModule> {
  loading ??= import('./codemirror').catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}

/**
 * The editor's code, fetched while the person looks at the list (called once the list has shown),
 * so that New note or a click on a note finds it loaded. It waits for an idle moment after the
 * list's own requests and renders, so it never shares the wire with them; not at all when the
 * browser says its user wants to save data.
 */
export function prefetchCodeMirror(): void {
  const connection = (navigator as { connection?: { saveData?: boolean } }).connection;
  if (loading !== null || connection?.saveData === true) return;
  const start = () =>
    void loadCodeMirror().catch(() => {
      /* the editor tries again when it mounts, and has its plain box meanwhile */
    });
  if (typeof requestIdleCallback === 'function') requestIdleCallback(start, { timeout: 2000 });
  else setTimeout(start, 200);
}

interface Props {
  /** The text, which this editor holds while it is on screen (it starts from it and answers for it). */
  text: NoteText;
  /** The editing surface's accessible name; the caller shows the same words as its visible label. */
  label: string;
  /** The text changed: read it from `text` when needed. */
  onChange: () => void;
  /** Ctrl/Cmd+S inside the editor. */
  onSave: () => void;
  /** Files pasted or dropped into the text (the cursor is where they go). */
  onFiles?: (files: File[]) => void;
  /** Filled with a way to put text at the cursor (an uploaded file's link). */
  inserter?: { current: ((text: string) => void) | null };
  /** Filled with a way to put text at the very start and focus there (Enter in the title). */
  starter?: { current: ((text: string) => void) | null };
  /** Told, as the editor scrolls, which line of the text (from 0, with a fraction) is at the top of what shows. */
  onTopLine?: ((line: number) => void) | undefined;
  /** Holds CodeMirror's handle while it is on screen (live co-editing binds to it); `onReady` says when. */
  handle?: { current: MarkdownEditorHandle | null };
  onReady?: () => void;
}

/**
 * The note's text: CodeMirror 6 with Markdown once its chunk has loaded. Until then (or if it
 * cannot load) a plain text box with the same name holds the text and takes typing; CodeMirror
 * then starts from whatever is in that box, with its selection and focus, so nothing typed is lost.
 */
export function MarkdownEditor({
  text,
  label,
  onChange,
  onSave,
  onFiles,
  inserter,
  starter,
  onTopLine,
  handle,
  onReady,
}: Props) {
  const host = useRef<HTMLDivElement>(null);
  const fallback = useRef<HTMLTextAreaElement>(null);
  const editor = useRef<MarkdownEditorHandle | null>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');
  /** The text it started from, for the plain box's first render and for CodeMirror if that box never rendered. */
  const [initial] = useState(() => text.get());
  const latest = useRef({ onChange, onSave, onFiles });
  latest.current = { onChange, onSave, onFiles };
  if (inserter !== undefined) {
    inserter.current = (text) => {
      if (editor.current !== null) {
        editor.current.insert(text);
        return;
      }
      // The plain box: the same, by hand.
      const box = fallback.current;
      if (box === null) return;
      box.setRangeText(text, box.selectionStart, box.selectionEnd, 'end');
      latest.current.onChange();
      box.focus();
    };
  }
  if (starter !== undefined) {
    starter.current = (text) => {
      if (editor.current !== null) {
        editor.current.startWith(text);
        return;
      }
      const box = fallback.current;
      if (box === null) return;
      if (text !== '') {
        box.setRangeText(text, 0, 0, 'start');
        latest.current.onChange();
      }
      box.setSelectionRange(0, 0);
      box.focus();
    };
  }
  const filesOf = (list: FileList | null | undefined) => [...(list ?? [])];

  // The text is read from whichever holds it: CodeMirror once loaded, the plain box until then.
  useEffect(() => {
    const read = () => editor.current?.text() ?? fallback.current?.value ?? initial;
    const source: TextSource = {
      get: read,
      same: (other) => (editor.current !== null ? editor.current.same(other) : read() === other),
      set: (next) => {
        if (editor.current !== null) editor.current.setText(next);
        else if (fallback.current !== null && fallback.current.value !== next) {
          fallback.current.value = next;
          latest.current.onChange();
        }
      },
      // The plain box (CodeMirror did not load): the merged text when nothing was typed since the
      // save; else what is typed stays, and the next save merges it again.
      apply: (from, to) => {
        if (editor.current !== null) editor.current.apply(from, to);
        else if (fallback.current !== null && fallback.current.value === from) {
          fallback.current.value = to;
          latest.current.onChange();
        }
      },
    };
    // Replaced between the first render and now (a draft restored): the box shows it too.
    const held = text.get();
    text.attach(source);
    if (held !== read()) source.set(held);
    return () => text.detach(source);
  }, [text]);

  useEffect(() => {
    let live = true;
    loadCodeMirror().then(
      ({ createMarkdownEditor }) => {
        if (!live || host.current === null) return;
        const box = fallback.current;
        const focused = box !== null && document.activeElement === box;
        editor.current = createMarkdownEditor({
          host: host.current,
          doc: box?.value ?? initial,
          label,
          selection: box ? { anchor: box.selectionStart, head: box.selectionEnd } : undefined,
          onChange: () => latest.current.onChange(),
          onSave: () => latest.current.onSave(),
          onFiles: (files) => latest.current.onFiles?.(files),
          onLayout: () => relayout.current(),
          noteTitles,
        });
        setState('ready');
        if (focused) editor.current.focus();
        if (handle !== undefined) handle.current = editor.current;
        onReady?.();
      },
      () => live && setState('failed'),
    );
    return () => {
      live = false;
      if (handle !== undefined) handle.current = null;
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);

  // The text scrolls with whatever holds it (the note's pane, or the page): read the line at the
  // top, below the sticky toolbar, once a frame.
  const topLine = useRef(onTopLine);
  topLine.current = onTopLine;
  /** Measures again where the text last scrolled (CodeMirror corrects the heights it guessed as lines come into view). */
  const relayout = useRef<() => void>(() => {});
  useEffect(() => {
    if (onTopLine === undefined) return;
    let frame = 0;
    const measure = (scroller: EventTarget | null) => {
      const handle = editor.current;
      const element = host.current;
      if (handle === null || element === null) return;
      const top = scroller instanceof Element ? scroller.getBoundingClientRect().top : 0;
      const toolbar = element.closest('form')?.querySelector('.toolbar')?.getBoundingClientRect().bottom ?? top;
      // Hundredths of a line: finer moves would only render the editor again for nothing.
      topLine.current?.(Math.round(handle.lineAt(Math.max(top, toolbar)) * 100) / 100);
    };
    let last: EventTarget | null = null;
    let scrolledAt = 0;
    const later = (scroller: EventTarget | null) => {
      last = scroller;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => measure(scroller));
    };
    const onScroll = (event: Event) => {
      const scroller = event.target;
      if (
        scroller !== document &&
        !(scroller instanceof Element && host.current !== null && scroller.contains(host.current))
      )
        return;
      scrolledAt = performance.now();
      later(scroller);
    };
    // Only while a scroll settles: typing changes heights too, and must not pay for this.
    relayout.current = () => {
      if (last !== null && performance.now() - scrolledAt < 1000) later(last);
    };
    document.addEventListener('scroll', onScroll, { capture: true, passive: true });
    return () => {
      cancelAnimationFrame(frame);
      relayout.current = () => {};
      document.removeEventListener('scroll', onScroll, { capture: true });
    };
  }, [onTopLine === undefined]);

  return (
    <div class="markdown-editor">
      <div ref={host} />
      {state !== 'ready' && (
        <textarea
          ref={fallback}
          class="plain-editor"
          aria-label={label}
          defaultValue={initial}
          spellcheck
          aria-describedby={state === 'failed' ? 'editor-failed' : undefined}
          onInput={() => onChange()}
          onPaste={(e) => {
            const files = filesOf(e.clipboardData?.files);
            if (files.length > 0 && onFiles) {
              e.preventDefault();
              onFiles(files);
            }
          }}
          onDrop={(e) => {
            const files = filesOf(e.dataTransfer?.files);
            if (files.length > 0 && onFiles) {
              e.preventDefault();
              onFiles(files);
            }
          }}
        />
      )}
      {state === 'failed' && (
        <p id="editor-failed" class="hint">
          The Markdown editor could not load; this plain text box works the same.
        </p>
      )}
    </div>
  );
}
