import { useEffect, useRef, useState } from 'preact/hooks';
import { accessToken } from './api';
import type { Live } from './collab';
import type { MarkdownEditorHandle } from './codemirror';
import type { EditorNow } from './editor-state';
import type { NoteText } from './note-text';

type CollabModule = typeof import('./collab');
let loading: Promise<CollabModule> | null = null;
/** The collaboration code (Yjs, the provider, the binding) arrives in its own chunk, once the editor is up. */
function loadCollab(): Promise<CollabModule> {
  loading ??= import('./collab').catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}

/**
 * `off`: not live (turned off on this device, a new note, a restored draft waiting for a choice, or
 * the socket not there): the editor saves by itself, merging. `live`: one shared text with the
 * others; the server makes the versions. `ended`: the server closed the session (access ended).
 */
export type LiveState =
  | { kind: 'off' }
  | { kind: 'connecting' }
  | { kind: 'live'; pending: boolean; people: string[]; writable: boolean }
  | { kind: 'ended'; why: string };

/** After a lost or refused connection, the next try waits this long, doubling up to a minute. */
const RETRY_MS = 2000;
const RETRY_MAX_MS = 60_000;

/**
 * Live co-editing of the open note (collab.ts) once CodeMirror is up (`ready`): text typed here
 * and not saved is brought into the shared text when the session starts, then CodeMirror and the
 * title follow the shared document. When the socket goes, the session is put away and the editor
 * goes on as without it (autosave, merging); a new session is tried a moment later.
 */
export function useLive({
  enabled,
  ready,
  noteId,
  name,
  handle,
  text,
  now,
  onTitle,
}: {
  enabled: boolean;
  ready: boolean;
  noteId: string;
  name: string;
  handle: { current: MarkdownEditorHandle | null };
  text: NoteText;
  now: { current: EditorNow };
  onTitle: (title: string) => void;
}): { state: LiveState; session: { current: Live | null } } {
  const [state, setState] = useState<LiveState>({ kind: 'off' });
  const current = useRef<Live | null>(null);
  const latest = useRef({ onTitle });
  latest.current = { onTitle };

  useEffect(() => {
    if (!enabled || !ready) return;
    let gone = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let wait = RETRY_MS;
    /** The last token was refused: the next connection asks for a fresh one. */
    let stale = false;
    /** A fresh token was tried after a refusal. */
    let refreshed = false;
    let live: Live | null = null;

    const putAway = () => {
      handle.current?.collaborate(null);
      live?.destroy();
      live = null;
      current.current = null;
    };
    const later = () => {
      putAway();
      setState({ kind: 'off' });
      if (gone) return;
      clearTimeout(retry);
      retry = setTimeout(start, wait);
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    };

    const start = async () => {
      let collab: CollabModule;
      try {
        collab = await loadCollab();
      } catch {
        return later();
      }
      if (gone) return;
      setState({ kind: 'connecting' });
      let joined = false;
      /** The others here, as last told (before the session joined the editor too). */
      let others: string[] = [];
      // Callbacks may come during connectLive itself (awareness set up): `ours` holds until it returns.
      let session_: Live | null = null;
      const ours = () => session_ !== null && live === session_;
      session_ = collab.connectLive({
        noteId,
        token: async () => {
          const token = await accessToken(stale);
          stale = false;
          return token;
        },
        user: { name, color: collab.colourFor(name) },
        onSynced: () => {
          const editor = handle.current;
          if (joined || gone || editor === null || session_ === null || !ours()) return;
          joined = true;
          wait = RETRY_MS;
          refreshed = false;
          const base = now.current.note;
          // Typed here and not in a version yet (before the session, or while it was away): into
          // the shared text, on top of what the others typed meanwhile.
          if (base !== null && session_.writable) {
            const typed = text.get();
            if (typed !== base.content) session_.bringIn(base.content, typed);
            if (now.current.title !== base.title) session_.setTitle(now.current.title);
          }
          const shared = session_.title();
          if (shared !== '' && shared !== now.current.title) latest.current.onTitle(shared);
          editor.collaborate(session_.binding(), session_.content());
          editor.setEditable(session_.writable);
          current.current = session_;
          setState({ kind: 'live', pending: false, people: others, writable: session_.writable });
        },
        onLost: () => {
          if (ours()) later();
        },
        onRefused: (reason) => {
          if (!ours()) return;
          // An expired token: once more with a fresh one. Refused again, or refused the note
          // (`Forbidden`): without live editing, saving as usual.
          if (reason !== 'Forbidden' && !refreshed) {
            stale = true;
            refreshed = true;
            return later();
          }
          putAway();
          setState({ kind: 'off' });
        },
        onEnded: (why) => {
          if (!ours()) return;
          if (why === 'Unauthorized') {
            stale = true;
            return later();
          }
          putAway();
          handle.current?.setEditable(false);
          gone = true;
          setState({
            kind: 'ended',
            why: 'Your access to this note ended: live editing is closed. The text stays here to read and copy.',
          });
        },
        onPending: (pending) =>
          ours() && setState((s) => (s.kind === 'live' && s.pending !== pending ? { ...s, pending } : s)),
        onPeople: (people) => {
          others = [...new Set(people)];
          if (ours())
            setState((s) =>
              s.kind === 'live' && s.people.join('\n') !== others.join('\n') ? { ...s, people: others } : s,
            );
        },
        onTitle: (title) => ours() && latest.current.onTitle(title),
      });
      live = session_;
    };
    void start();
    return () => {
      gone = true;
      clearTimeout(retry);
      putAway();
    };
  }, [enabled, ready, noteId]);

  return { state, session: current };
}
