import { HocuspocusProvider } from '@hocuspocus/provider';
import { Prec, type Extension } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { yCollab, yUndoManagerKeymap } from 'y-codemirror.next';
import * as Y from 'yjs';
import { colourFor } from './people-colours';
import { changesOnto } from './text-changes';

export { colourFor, PALETTE } from './people-colours';

/**
 * Live co-editing, loaded on demand beside the editor (use-live.ts imports this module
 * dynamically): a Hocuspocus provider on /api/collab (CONTRACT "Many hands and devices"), the
 * document named by the note's id, its `title` and `content` Y.Text, and y-codemirror.next binding
 * `content` to CodeMirror with the others' cursors and names (awareness).
 *
 * The access token goes in the first message (the provider's `token`), never in the URL; it is
 * asked for at each (re)connection, so a refreshed token is the one sent.
 */
export interface LiveOptions {
  noteId: string;
  /** The access token: the session's, refreshed when `stale` (the last one was refused). */
  token: () => Promise<string>;
  user: { name: string; color: string };
  /** Connected and in step with the server (`synced`), or the socket went (`lost`). */
  onSynced: () => void;
  onLost: () => void;
  /** Refused at the door (no access, or the token): `permission-denied`. */
  onRefused: (reason: string) => void;
  /** The server ended the session: `Forbidden` (access ended) or `Unauthorized` (the session did). */
  onEnded: (reason: string) => void;
  /**
   * The owner changed this person's role while the note is open (the server's stateless
   * `{"type":"role"}` message, docs/api.md): `false` made viewer (what is typed from now on is
   * dropped by the server), `true` made editor again.
   */
  onWritable: (writable: boolean) => void;
  /** Whether everything typed here has reached the server. */
  onPending: (pending: boolean) => void;
  /** The names of the others here now. */
  onPeople: (names: string[]) => void;
  /** The title as typed by someone else. */
  onTitle: (title: string) => void;
}

/** A session's document as it was when its socket went: the state, its writers, and its text. */
export interface KeptDocument {
  state: Uint8Array;
  writers: Map<number, number>;
  content: string;
  title: string;
}

/**
 * The origin of changes this side makes to the shared text other than typing (an earlier session's
 * document taken in, text brought in, the title set): the provider sends them like any other, but
 * undo (which tracks typing) leaves them alone; one Ctrl+Z must not take back the others' words.
 */
const NOT_TYPING = { notTyping: true };

export interface Live {
  /** Whether this connection may write (`readonly` for viewers; changes with the role, `onWritable`). */
  readonly writable: boolean;
  content(): string;
  title(): string;
  /** CodeMirror's binding to the shared text, with the others' cursors and their names. */
  binding(): Extension;
  /** The whole document as this side holds it, kept when the socket goes. */
  keep(): KeptDocument;
  /**
   * Whether `kept` (an earlier session's) comes from the same document as the server's now: they
   * share a writer (the seed the server made the document from, at least). A server that lost its
   * stored document made a new one from a version, whose items no earlier state has.
   */
  sharesHistory(kept: KeptDocument): boolean;
  /**
   * Takes an earlier session's document in, merged by Yjs item: what the server already has counts
   * once, and what it lacks (typed here and never acknowledged; acknowledged, then lost by a server
   * that stopped before storing it; dropped while a viewer) goes to it again. Not an undo step.
   */
  takeIn(kept: KeptDocument): void;
  /** Brings text typed here on `from` (before the session, or while it was away) into the shared text. */
  bringIn(from: string, to: string): void;
  setTitle(title: string): void;
  destroy(): void;
}

// The others' names show beside their cursors at all times (the library shows them on hover), in
// the page's font; white on each colour of PALETTE passes WCAG AA.
const namesTheme = EditorView.theme({
  '.cm-ySelectionInfo': {
    opacity: '1 !important',
    fontFamily: 'inherit',
    fontSize: '0.7rem',
    borderRadius: '3px',
  },
  // Above the caret it would be cut off by the editor's top edge on the first line: below there.
  '.cm-content > .cm-line:first-child .cm-ySelectionInfo': { top: '1.15em' },
});

// y-codemirror.next gives each cursor its colour in a `style` attribute (setAttribute), which the
// page's CSP (style-src 'self') refuses: the text stays in the attribute but is never applied, and
// Chromium rewrites the attribute from the element's (empty) inline style when it next
// synchronises it — a screenshot did — so rules matching the attribute's text stopped matching and
// the name was white on nothing. Styles set through the CSSOM are not subject to CSP: after each
// redraw the carets are coloured here, by the name they show (PALETTE's colour for it; the server
// replaces every client's announced name and colours with its account's, src/collab/awareness.ts). The selections are
// fine: CodeMirror sets mark attributes' `style` through the CSSOM itself.
const caretColours = EditorView.updateListener.of((update) => {
  for (const caret of update.view.contentDOM.querySelectorAll<HTMLElement>('.cm-ySelectionCaret')) {
    const name = caret.querySelector('.cm-ySelectionInfo')?.textContent ?? '';
    const colour = colourFor(name);
    if (caret.style.backgroundColor !== '' && caret.dataset.colour === colour) continue;
    caret.dataset.colour = colour;
    caret.style.backgroundColor = colour;
    caret.style.borderColor = colour;
  }
});

/** Replaces `text`'s content by `next` with the smallest change (what differs between their ends). */
function replaceText(text: Y.Text, next: string): void {
  const now = text.toString();
  if (now === next) return;
  let head = 0;
  while (head < now.length && head < next.length && now[head] === next[head]) head += 1;
  let tail = 0;
  while (
    tail < now.length - head &&
    tail < next.length - head &&
    now[now.length - 1 - tail] === next[next.length - 1 - tail]
  )
    tail += 1;
  text.doc!.transact(() => {
    if (now.length - head - tail > 0) text.delete(head, now.length - head - tail);
    if (next.length - head - tail > 0) text.insert(head, next.slice(head, next.length - tail));
  }, NOT_TYPING);
}

export function connectLive(options: LiveOptions): Live {
  const document = new Y.Doc();
  const content = document.getText('content');
  const title = document.getText('title');
  const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/api/collab`;
  let writable = true;
  const provider = new HocuspocusProvider({
    url,
    name: options.noteId,
    document,
    token: options.token,
    onAuthenticated: ({ scope }) => {
      writable = scope === 'read-write';
    },
    onAuthenticationFailed: ({ reason }) => options.onRefused(reason),
    onStateless: ({ payload }) => {
      let message: { type?: unknown; role?: unknown };
      try {
        message = JSON.parse(payload);
      } catch {
        return;
      }
      if (message?.type !== 'role' || typeof message.role !== 'string') return;
      const now = message.role !== 'viewer';
      if (now === writable) return;
      writable = now;
      // Made editor again: what was typed here and dropped while a viewer (kept in this document,
      // unacknowledged) is offered to the server again by a sync, as on connecting; until it is
      // taken, the next typing would wait for it on the server.
      if (writable) provider.forceSync();
      options.onWritable(writable);
    },
    onSynced: ({ state }) => {
      if (state) options.onSynced();
    },
    onClose: ({ event }) => {
      // The server's own close (a message, the socket stays): access or the session ended.
      if (event.reason === 'Forbidden' || event.reason === 'Unauthorized') options.onEnded(event.reason);
    },
    onDisconnect: () => options.onLost(),
    onUnsyncedChanges: ({ number }) => options.onPending(number > 0),
    onAwarenessChange: ({ states }) => {
      const me = document.clientID;
      options.onPeople(
        states
          .filter((s) => s.clientId !== me)
          .map((s) => (s as { user?: { name?: string } }).user?.name)
          .filter((name): name is string => typeof name === 'string'),
      );
    },
  });
  provider.setAwarenessField('user', { ...options.user, colorLight: `${options.user.color}33` });
  title.observe((event) => {
    if (!event.transaction.local) options.onTitle(title.toString());
  });
  const undoManager = new Y.UndoManager(content);
  return {
    get writable() {
      return writable;
    },
    content: () => content.toString(),
    keep: () => ({
      state: Y.encodeStateAsUpdate(document),
      writers: Y.decodeStateVector(Y.encodeStateVector(document)),
      content: content.toString(),
      title: title.toString(),
    }),
    sharesHistory(kept) {
      const theirs = Y.decodeStateVector(Y.encodeStateVector(document));
      for (const [client, clock] of kept.writers) if (clock > 0 && (theirs.get(client) ?? 0) > 0) return true;
      return false;
    },
    takeIn: (kept) => Y.applyUpdate(document, kept.state, NOT_TYPING),
    title: () => title.toString(),
    binding: () => [
      yCollab(content, provider.awareness, { undoManager }),
      // Undo and redo change the shared text directly, past CodeMirror's read-only state (a
      // viewer's): only while the editor takes typing.
      Prec.high(
        keymap.of(
          yUndoManagerKeymap.map((binding) => ({
            ...binding,
            run: (view: EditorView) => !view.state.readOnly && (binding.run?.(view) ?? false),
          })),
        ),
      ),
      namesTheme,
      caretColours,
    ],
    bringIn(from, to) {
      if (from === to) return;
      const changes = changesOnto(content.toString(), from, to);
      document.transact(() => {
        // From the end, so the positions before each change still hold.
        const list: [number, number, string][] = [];
        changes.iterChanges((fromA, toA, _fromB, _toB, inserted) => list.push([fromA, toA, inserted.toString()]));
        for (const [start, end, text] of list.reverse()) {
          if (end > start) content.delete(start, end - start);
          if (text !== '') content.insert(start, text);
        }
      }, NOT_TYPING);
    },
    setTitle: (next) => replaceText(title, next),
    destroy: () => {
      undoManager.destroy();
      provider.destroy();
      document.destroy();
    },
  };
}
