import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { useLiveChanges } from '../api/events';
import { accessToken, getNote } from './api';
import type { KeptDocument, Live } from './collab';
import type { MarkdownEditorHandle } from './codemirror';
import type { EditorNow } from './editor-state';
import type { NoteText } from './note-text';
import { currentConnection, onConnection } from '../offline/connection';

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
 * others; the server makes the versions; `writable` false once the owner made this person a viewer
 * (then `pending` means typed here and dropped by the server). `ended`: the server closed the
 * session (access ended).
 */
export type LiveState =
  | { kind: 'off'; why?: string }
  | { kind: 'connecting' }
  | { kind: 'live'; pending: boolean; people: string[]; writable: boolean }
  | { kind: 'ended'; why: string };

/**
 * How long something typed here waits for the server's acknowledgement before the status says
 * "Saving…". Most keystrokes are acknowledged well within it; flipping the status twice a key cost
 * a render and a layout each, which made a 1 MB note type slower live than not.
 */
const PENDING_SHOWN_MS = 500;

/** The server's refusal when the account has as many live connections as it allows (docs/api.md). */
const TOO_MANY_CONNECTIONS = 'too_many_connections';

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
  saving,
  onTitle,
}: {
  enabled: boolean;
  ready: boolean;
  noteId: string;
  name: string;
  handle: { current: MarkdownEditorHandle | null };
  text: NoteText;
  now: { current: EditorNow };
  /** A save through the API is on its way (before the session joined, the editor saves by itself). */
  saving: boolean;
  onTitle: (title: string) => void;
}): {
  state: LiveState;
  session: { current: Live | null };
  /** Whether something typed here is not yet with the server, now (`state.pending` says it late). */
  pending: { readonly current: boolean };
  /**
   * Made viewer by the owner while the note was open, as last told: it holds while the socket is
   * away too (the editor must not go back to saving through the API, which would refuse it).
   */
  demoted: boolean;
} {
  const [state, setState] = useState<LiveState>({ kind: 'off' });
  const [demoted, setDemoted] = useState(false);
  const pendingNow = useRef(false);
  const current = useRef<Live | null>(null);
  const latest = useRef({ onTitle });
  latest.current = { onTitle };
  const savingNow = useRef(saving);
  savingNow.current = saving;
  /**
   * A session that synced while a save through the API was on its way joins once the save is
   * answered. The server takes a save into the shared text as an edit of its own; joined before the
   * answer, the text typed here was brought in again on top of it, from the version before the save
   * (the whole note twice, on a slow network).
   */
  const joinAfterSave = useRef<(() => void) | null>(null);
  useEffect(() => {
    if (saving) return;
    const join = joinAfterSave.current;
    joinAfterSave.current = null;
    join?.();
  }, [saving]);
  /** While live: asks the server whether this person may still open the note, and ends the session if not. */
  const recheck = useRef<(() => void) | null>(null);
  // The text itself stays in step through the socket (Yjs exchanges whatever either side lacks),
  // but the events that would have told the server or this tab that access ended may be the ones
  // missed: the note is asked for again, as the server answers it now.
  useLiveChanges((change) => {
    if (change.type === 'resync') recheck.current?.();
  }, []);

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
    let showPending: ReturnType<typeof setTimeout> | undefined;
    /**
     * The last session's document when it went (its text is the editor's then), and the version the
     * editor was on: the next session takes that document in (Yjs merges it by item, so nothing is
     * counted twice and nothing the server lacks is lost) and brings in only what was typed since.
     * From the version instead, the others' typing seen live went in twice; from the text the
     * server had last acknowledged, an update of another's that came while a keystroke here was
     * unacknowledged went in twice, and what a stopped server had not stored was lost.
     */
    let left: { kept: KeptDocument; version: number } | null = null;

    /** Ends the session; `keep`: the socket went, and the next session takes its document in. */
    const putAway = (keep = false) => {
      const version = now.current.note?.version;
      if (keep && live !== null && current.current === live && version !== undefined)
        left = { kept: live.keep(), version };
      clearTimeout(showPending);
      pendingNow.current = false;
      handle.current?.collaborate(null);
      live?.destroy();
      live = null;
      current.current = null;
    };
    const endForGood = () => {
      putAway();
      handle.current?.setEditable(false);
      gone = true;
      setState({
        kind: 'ended',
        why: 'Your access to this note ended: live editing is closed. The text stays here to read and copy.',
      });
    };
    recheck.current = () => {
      if (live === null || gone) return;
      getNote(noteId).catch((error: unknown) => {
        if (!gone && error instanceof ApiError && (error.status === 404 || error.status === 403)) endForGood();
      });
    };
    const later = (why?: string) => {
      putAway(true);
      setState(why === undefined ? { kind: 'off' } : { kind: 'off', why });
      if (gone) return;
      clearTimeout(retry);
      retry = setTimeout(() => {
        retry = undefined;
        void start();
      }, wait);
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
      /** The session takes over the editor: what was typed here goes into the shared text. */
      const join = () => {
        const editor = handle.current;
        if (joined || gone || editor === null || session_ === null || !ours()) return;
        joined = true;
        wait = RETRY_MS;
        refreshed = false;
        const base = now.current.note;
        // The last session's document, unless a version was saved or shown here since (autosave
        // while away: the server took that text in as an edit of its own, so the old document's
        // typing would go in twice) or the server's document is a new one (it lost the stored one).
        const earlier =
          left !== null && base !== null && left.version === base.version && session_.sharesHistory(left.kept)
            ? left.kept
            : null;
        left = null;
        // Also for a viewer: what was typed and dropped when made one stays on screen, pending.
        if (earlier !== null) session_.takeIn(earlier);
        // Typed here and not in the shared text yet (before the session, or while it was away):
        // into it, on top of what the others typed meanwhile. The title likewise, only if it was
        // changed here since (a rename by someone else meanwhile stays otherwise).
        if (base !== null && session_.writable) {
          const typed = text.get();
          const from = earlier?.content ?? base.content;
          if (typed !== from) session_.bringIn(from, typed);
          if (now.current.title !== (earlier?.title ?? base.title)) session_.setTitle(now.current.title);
        }
        const shared = session_.title();
        if (shared !== '' && shared !== now.current.title) latest.current.onTitle(shared);
        editor.collaborate(session_.binding(), session_.content());
        editor.setEditable(session_.writable);
        current.current = session_;
        setState({ kind: 'live', pending: false, people: others, writable: session_.writable });
        setDemoted(!session_.writable);
      };
      session_ = collab.connectLive({
        noteId,
        token: async () => {
          const token = await accessToken(stale);
          stale = false;
          return token;
        },
        user: { name, color: collab.colourFor(name) },
        onSynced: () => {
          if (savingNow.current) joinAfterSave.current = join;
          else join();
        },
        onLost: () => {
          if (ours()) later();
        },
        onRefused: (reason) => {
          if (!ours()) return;
          // This account has as many notes open live as the server allows (other tabs, devices):
          // this one saves as usual and tries again later, when one of those may have closed.
          if (reason === TOO_MANY_CONNECTIONS)
            return later(
              'Not editing live: you have too many notes open live in other tabs or on other devices. Your changes are saved as usual; close some of them to edit this one live.',
            );
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
          endForGood();
        },
        onWritable: (writable) => {
          // Before the session joined, onSynced reads `writable` itself.
          if (!ours() || !joined) return;
          // Made viewer: no more typing, at once (the server drops it from now on); made editor
          // again: typing again. What was typed and not yet acknowledged when made viewer stays on
          // screen, unacknowledged (`pending`), and reaches the others if made editor again.
          handle.current?.setEditable(writable);
          setDemoted(!writable);
          setState((s) => (s.kind === 'live' && s.writable !== writable ? { ...s, writable } : s));
        },
        onPending: (pending) => {
          if (!ours()) return;
          pendingNow.current = pending;
          clearTimeout(showPending);
          // Unchanged (acknowledged before it was shown), setState keeps the state and nothing renders.
          const show = () => setState((s) => (s.kind === 'live' && s.pending !== pending ? { ...s, pending } : s));
          if (pending) showPending = setTimeout(show, PENDING_SHOWN_MS);
          else show();
        },
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
    // The device lost its network (the browser says so): the socket went with it, though only its
    // own time-out would tell, many seconds on, with "Live" shown meanwhile. The session is put
    // away at once (what is typed meanwhile is kept and brought in later), and tried again as soon
    // as the service answers again.
    let wakes = currentConnection().wakes;
    const stopWatching = onConnection((connection) => {
      if (gone) return;
      const woke = connection.wakes !== wakes;
      wakes = connection.wakes;
      if (connection.offline && navigator.onLine === false && live !== null) later();
      else if (woke && live === null && retry !== undefined) {
        clearTimeout(retry);
        retry = undefined;
        wait = RETRY_MS;
        void start();
      }
    });
    return () => {
      gone = true;
      stopWatching();
      recheck.current = null;
      clearTimeout(retry);
      putAway();
    };
  }, [enabled, ready, noteId]);

  return { state, session: current, pending: pendingNow, demoted };
}
