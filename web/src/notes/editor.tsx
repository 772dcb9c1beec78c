import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { createNote, deleteNote, getNote, memberRole as roleOn, saveVersion, type Folder, type Note } from './api';
import { FilingBar } from './filing';
import { DiffView } from '../history/diff-view';
import { diffOf, type NoteDiff } from '../history/api';
import { Markdown } from '../markdown/markdown';
import { MarkdownEditor } from './markdown-editor';
import { useAttacher } from './attach';
import { SharePanel } from '../sharing/share-panel';
import { navigate, setNavigationGuard } from '../app/router';
import { useLiveChanges } from '../api/events';
import { AUTOSAVE_IDLE_MS, autosave, openForReading } from '../app/device-settings';
import { clearDraft, loadDraft, saveDraft } from './drafts';

/** The address of a note not saved yet: `/notes/new`. */
export const NEW = 'new';

/** A new note as the editor holds it until its first save: version 0, on no server. */
function unsavedNote(me: string, folderId: string | null): Note {
  const now = new Date().toISOString();
  return {
    id: NEW, owner_id: me, title: 'Untitled', content: '', version: 0, version_id: '', created_at: now, updated_at: now,
    folder_id: folderId, pinned: false, archived: false, tags: [],
  };
}

interface Conflict {
  server: Note;
  diff: NoteDiff | null;
  mine: { title: string; content: string };
}

/**
 * One note: title, Markdown text and its preview. Saves on request (button, Ctrl/Cmd+S) and, unless
 * turned off on this device, by itself a moment after the typing stops (device-settings.ts); each save conditional on the version the user started from (If-Match); a 412 never overwrites,
 * it shows what changed and lets the user choose.
 */
export function Editor({ noteId, me, onChanged, onDeleted, onCreated, folders, folderId = null }: {
  /** `new`: a note not on the server yet, created by its first save. */
  noteId: string; me: string; onChanged: () => void; onDeleted: (title: string) => void;
  /** The first save of a new note created it, with this id. */
  onCreated?: (id: string) => void;
  folders: Folder[];
  /** Where a new note goes. */
  folderId?: string | null;
}) {
  // A new note is on screen at once (nothing to fetch), so its title takes the very first keys.
  const [note, setNote] = useState<Note | null>(() => (noteId === NEW ? unsavedNote(me, folderId) : null));
  const [title, setTitle] = useState(() => (noteId === NEW ? 'Untitled' : ''));
  const [content, setContent] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [preview, setPreview] = useState(false);
  /** The line at the top of the editor, which the preview beside it follows. */
  const [topLine, setTopLine] = useState<number | undefined>(undefined);
  /** Editing, or reading the note rendered (how a note with text opens when so chosen on this device). */
  const [editing, setEditing] = useState(noteId === NEW);
  const [sharing, setSharing] = useState(false);
  const [replaced, setReplaced] = useState(0);
  /** A version saved elsewhere (another tab, device or person) since this one was loaded, and by whom. */
  const [newer, setNewer] = useState<Note | null>(null);
  const [newerBy, setNewerBy] = useState<string | null>(null);
  /** The caller's role on a note shared with them (null: their own note). */
  const [role, setRole] = useState<'viewer' | 'editor' | null>(null);
  const [gone, setGone] = useState('');
  /** Unsaved text of an earlier visit, restored from this device: the version it was typed on. */
  const [restored, setRestored] = useState<{ version: number; server: Note } | null>(null);
  const titleRef = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const inserter = useRef<((text: string) => void) | null>(null);
  const attacher = useAttacher((text) => inserter.current?.(text));
  const dirty = note !== null && (title !== note.title || content !== note.content);
  /**
   * The editor as of the latest render, for answers and timers that come later: the live event of
   * a save made here can arrive before that save's answer has updated `note`, and judged against
   * the older note it looked like a newer version from elsewhere; a draft is written as it is now.
   */
  const latest = useRef({ note, dirty, title, content, role });
  latest.current = { note, dirty, title, content, role };

  /** The id this editor's new note was given by its first save: the address follows, the text stays. */
  const created = useRef<string | null>(null);
  useEffect(() => {
    if (noteId === created.current) return;
    if (noteId === NEW) {
      // Already on screen; only text of an earlier new note, never saved, comes back into it. (This
      // read is queued before the draft effect's delete of an unchanged note's draft, below, and
      // IndexedDB runs transactions on one store in the order they were made.)
      void loadDraft(me, NEW).then((draft) => {
        if (draft === undefined || latest.current.dirty || latest.current.note?.version !== 0) return;
        const blank = unsavedNote(me, folderId);
        setTitle(draft.title);
        setContent(draft.content);
        setReplaced((n) => n + 1);
        setRestored({ version: 0, server: blank });
      }, () => undefined);
      return;
    }
    (async () => {
      try {
        const loaded = await getNote(noteId);
        const memberRole = loaded.owner_id === me ? null : await roleOn(noteId, me);
        // Text typed here and never saved (a reload, a crash, an ended session) comes back, against
        // the version it was typed on: saving it then goes through the conflict check.
        const draft = memberRole === 'viewer' ? undefined : await loadDraft(me, noteId);
        const differs = draft !== undefined && (draft.title !== loaded.title || draft.content !== loaded.content);
        if (draft !== undefined && !differs) void clearDraft(me, noteId);
        setRole(memberRole);
        if (differs && draft.baseVersion < loaded.version) {
          setNote({ ...loaded, version: draft.baseVersion });
          setNewer(loaded);
        } else {
          setNote(loaded);
        }
        setTitle(differs ? draft.title : loaded.title);
        setContent(differs ? draft.content : loaded.content);
        if (differs) setRestored({ version: draft.baseVersion, server: loaded });
        // Unsaved text of an earlier visit opens where it was being written.
        setEditing(differs || loaded.content === '' || !openForReading.on());

      } catch (e) {
        setError(errorMessage(e));
      }
    })();
  }, [noteId]);

  // Coming back to the tab: has the note moved on elsewhere? (Until live events exist, a look on focus.)
  useEffect(() => {
    const look = async () => {
      if (document.visibilityState !== 'visible' || note === null || note.version === 0) return;
      const server = await getNote(noteId).catch(() => undefined);
      const now = latest.current.note;
      if (server !== undefined && now !== null && server.version > now.version) setNewer(server);
    };
    window.addEventListener('focus', look);
    document.addEventListener('visibilitychange', look);
    return () => {
      window.removeEventListener('focus', look);
      document.removeEventListener('visibilitychange', look);
    };
  }, [noteId, note]);

  const loadVersion = (server: Note, by: string | null = null) => {
    setNote(server);
    setTitle(server.title);
    setContent(server.content);
    setReplaced(replaced + 1);
    setConflict(null);
    setNewer(null);
    setNewerBy(null);
    setRestored(null);
    setStatus(server.version === 0 ? '' : by === null ? `Loaded version ${server.version}` : `Version ${server.version}, saved by ${by}, is shown`);
  };

  // Saves elsewhere arrive as they happen: shown at once when nothing here is unsaved, else offered
  // (and the conflict flow still applies to a save from here).
  useLiveChanges((change) => {
    if (change.data.id !== noteId || note === null) return;
    if (change.type === 'note.trashed' || change.type === 'note.deleted') {
      setGone('This note was moved to the trash by its owner.');
      return;
    }
    if (change.type !== 'note.updated' || (change.data.version ?? 0) <= note.version) return;
    void (async () => {
      const server = await getNote(noteId).catch(() => undefined);
      const now = latest.current;
      if (server === undefined || now.note === null || server.version <= now.note.version) return;
      const by = change.data.author_username ?? null;
      if (now.dirty) {
        setNewer(server);
        setNewerBy(by);
      } else {
        loadVersion(server, by);
      }
    })();
  }, [noteId, note, dirty, replaced]);

  // Once the note is on screen (not before: the fields do not exist until then), the focus moves to
  // it: a new (unsaved) note's title, selected, so typing names it; another note's form, so the next Tab
  // reaches its toolbar instead of the rest of the list (and no phone keyboard opens).
  // Before the next event is handled (a layout effect), so keys typed right after New note land.
  const focusedFor = useRef<string | null>(null);
  useLayoutEffect(() => {
    if (note === null || focusedFor.current === note.id) return;
    focusedFor.current = note.id;
    if (note.version === 0) {
      titleRef.current?.focus();
      titleRef.current?.select();
    }
    else formRef.current?.focus({ preventScroll: true });
  }, [note]);

  /** Set once the user chose to leave without saving: the draft went with the answer. */
  const discarded = useRef(false);
  // What is unsaved as of the latest render, not as of the effect that calls this: a save's answer
  // is rendered at once but its effects wait for the next frame, and a pause ending in between
  // would otherwise write the text just saved back as a draft (a new note's, offered again by the
  // next New note).
  const keepDraft = () => {
    const now = latest.current;
    if (!now.dirty || now.note === null || discarded.current || now.role === 'viewer') return;
    void saveDraft(me, now.note.id, { title: now.title, content: now.content, baseVersion: now.note.version, savedAt: new Date().toISOString() });
  };

  // Every change is kept on this device as it is typed (a moment after the typing pauses), and let
  // go once nothing is unsaved.
  useEffect(() => {
    if (note === null || role === 'viewer') return;
    if (!dirty) {
      void clearDraft(me, noteId);
      return;
    }
    const timer = setTimeout(keepDraft, 250);
    // Leaving the page within the pause: written at once (best effort, as the page goes).
    window.addEventListener('pagehide', keepDraft);
    return () => {
      clearTimeout(timer);
      window.removeEventListener('pagehide', keepDraft);
    };
  }, [title, content, dirty, note]);
  // Gone from the screen within the pause without being asked (the session ended, say): written now.
  useEffect(() => () => keepDraft(), []);

  // Saved by itself once the typing pauses — not over a conflict, a restored draft or a newer
  // version on offer, which wait for the user's choice. `note` re-arms it after a save, for what
  // was typed while that save ran.
  useEffect(() => {
    if (!dirty || role === 'viewer' || conflict !== null || restored !== null || newer !== null || !autosave.on()) return;
    const timer = setTimeout(() => void saveRef.current(), AUTOSAVE_IDLE_MS);
    return () => clearTimeout(timer);
  }, [title, content, dirty, note, conflict, restored, newer, role]);

  // Leaving with unsaved text asks first, in the app and when closing or reloading the tab.
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    setNavigationGuard(() => {
      const leave = window.confirm('This note has unsaved changes. Leave without saving?');
      // Leaving without saving, asked and answered: the draft goes too (a closed tab keeps it).
      if (leave) {
        discarded.current = true;
        void clearDraft(me, noteId);
      }
      return leave;
    });
    return () => {
      window.removeEventListener('beforeunload', warn);
      setNavigationGuard(null);
    };
  }, [dirty]);

  const save = async (base = note, text = { title, content }) => {
    if (base === null || busy) return;
    // An unchanged save would only make an identical version.
    if (text.title === base.title && text.content === base.content) {
      setStatus(base.version === 0 ? 'Nothing to save yet' : 'No changes to save');
      return;
    }
    setBusy(true);
    setError('');
    setStatus('Saving…');
    try {
      if (base.version === 0) {
        // The first save of a new note creates it (until then nothing was on the server).
        const made = await createNote({ ...text, folder_id: base.folder_id });
        created.current = made.id;
        // The same note on screen: the focus stays where the user is typing.
        focusedFor.current = made.id;
        setNote(made);
        setStatus('Saved as version 1');
        void clearDraft(me, NEW);
        onCreated?.(made.id);
        return;
      }
      const answer = await saveVersion(base.id, base.version, text);
      if (answer === 'conflict') {
        const server = await getNote(base.id);
        const diff = await diffOf(base.id, { from: base.version, to: server.version }).catch(() => null);
        setConflict({ server, diff, mine: text });
        setStatus('');
        return;
      }
      const version = answer.saved;
      // The text stays as it is: what was typed while the save ran is newer, and still unsaved.
      setNote({ ...base, ...text, version, updated_at: new Date().toISOString() });
      setConflict(null);
      setRestored(null);
      setStatus(`Saved as version ${version}`);
      onChanged();
    } catch (e) {
      setError(errorMessage(e));
      setStatus('');
    } finally {
      setBusy(false);
    }
  };

  const saveRef = useRef(save);
  saveRef.current = save;
  useEffect(() => {
    // Ctrl/Cmd+S outside the text (the title, a button); inside it the editor's own keymap saves
    // and marks the event handled, so it is not saved twice.
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented) return;
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 's') {
        event.preventDefault();
        void saveRef.current();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const remove = async () => {
    // The trash keeps what was saved, not what is typed: deleting unsaved text asks first.
    if (dirty && !window.confirm('This note has unsaved changes, which the trash will not keep. Delete it anyway?')) return;
    try {
      await deleteNote(noteId);
      discarded.current = true;
      void clearDraft(me, noteId);
      setNavigationGuard(null);
      setNote(null);
      onDeleted(title || 'Untitled');
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  if (note === null) return error ? <p class="error" role="alert">{error}</p> : <p class="muted" role="status">Loading…</p>;
  const owner = role === null;
  const canEdit = role !== 'viewer';
  const onServer = note.version > 0;
  return (
    <form class="editor" ref={formRef} tabIndex={-1} aria-label="Note" onSubmit={(e) => { e.preventDefault(); void save(); }}>
      <div class="toolbar">
        <a class="back" href="/">← Notes</a>
        <span class={`state ${dirty ? 'dirty' : ''}`} role="status" aria-live="polite">
          {dirty ? 'Unsaved changes' : status || (onServer ? `Version ${note.version}` : 'New note, not saved yet')}
        </span>
        {canEdit && <button type="submit" disabled={busy} aria-keyshortcuts="Control+S Meta+S">Save</button>}
        {canEdit && <button type="button" class="secondary" aria-pressed={editing} aria-keyshortcuts="E" onClick={() => setEditing(!editing)}>Edit</button>}
        {canEdit && editing && <button type="button" class="secondary" aria-pressed={preview} aria-keyshortcuts="P" onClick={() => setPreview(!preview)}>Preview</button>}
        {canEdit && attacher.button}
        {onServer && <button type="button" class="secondary" onClick={() => navigate(`/notes/${noteId}/history`)}>History</button>}
        {owner && onServer && <button type="button" class="secondary" aria-expanded={sharing} onClick={() => setSharing(!sharing)}>Share</button>}
        {owner && onServer && <button type="button" class="danger" onClick={remove}>Delete</button>}
      </div>
      {!onServer ? <p class="muted">A new note: it is kept on this device until you save it.</p> : owner
        ? <FilingBar note={note} folders={folders} onFiled={(filing) => { setNote({ ...note, ...filing }); onChanged(); }} />
        : <p class="notice shared-badge">Shared with you: you can {role === 'editor' ? 'read and edit' : 'read'} this note.</p>}
      {gone && <p class="error" role="alert">{gone}</p>}
      {restored && dirty && (
        <div class="notice" role="status">
          {restored.version === 0 ? 'Unsaved text of a new note from this device was restored.' : `Unsaved text from this device, typed on version ${restored.version}, was restored.`}{' '}
          <button type="button" class="secondary" onClick={() => loadVersion(restored.server)}>Discard it</button>
        </div>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      {attacher.message}
      {sharing && <SharePanel noteId={noteId} version={note.version} onClose={() => setSharing(false)} />}
      {newer && newer.version > note.version && !conflict && (
        <div class="notice" role="status">
          Version {newer.version} of this note was saved {newerBy === null ? 'elsewhere' : `by ${newerBy}`}.{' '}
          {dirty
            ? 'Saving will show what changed there beside your text.'
            : <button type="button" class="secondary" onClick={() => loadVersion(newer)}>Load version {newer.version}</button>}
        </div>
      )}
      {conflict && (
        <ConflictPanel conflict={conflict}
          keepMine={() => save(conflict.server, conflict.mine)}
          takeTheirs={() => loadVersion(conflict.server)} />
      )}
      {(!canEdit || !editing) && (
        <article class="reading" aria-labelledby="reading-title">
          <h2 class="note-title" id="reading-title">{(canEdit ? title : note.title) || 'Untitled'}</h2>
          <Markdown source={canEdit ? content : note.content} label="Note" remoteKey={note.version > 0 ? note.id : undefined} />
        </article>
      )}
      {/* Hidden, not gone, while reading: the editor keeps its text, cursor and undo history. */}
      {canEdit && <div class="writing" hidden={!editing}>
      <label for="title">Title</label>
      <input id="title" ref={titleRef} value={title} maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
      <div class={`panes ${preview ? 'with-preview' : ''}`}>
        <div class="pane">
          <div class="field-label">Content</div>
          <MarkdownEditor value={content} replaced={replaced} label="Content" onChange={setContent}
            onSave={(text) => void saveRef.current(note, { title, content: text })}
            onFiles={attacher.attach} inserter={inserter} onTopLine={preview ? setTopLine : undefined} />
        </div>
        {preview && editing && <Markdown source={content} label="Preview" remoteKey={note.version > 0 ? note.id : undefined} line={topLine} />}
      </div>
      </div>}
    </form>
  );
}

function ConflictPanel({ conflict, keepMine, takeTheirs }: { conflict: Conflict; keepMine: () => void; takeTheirs: () => void }) {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(conflict.mine.content);
      setCopied('Your text is on the clipboard.');
    } catch {
      setCopied('Copying was refused: select your text below and copy it.');
    }
  };
  return (
    <section class="conflict" role="alert" aria-labelledby="conflict-heading">
      <h2 id="conflict-heading">This note changed since you opened it</h2>
      <p>Version {conflict.server.version} was saved elsewhere. Nothing was overwritten. Choose what to keep:</p>
      {conflict.diff ? (
        <DiffView diff={conflict.diff} caption="Changes saved elsewhere" />
      ) : (
        <div class="side-by-side">
          <div><h3>Saved elsewhere</h3><pre>{conflict.server.content}</pre></div>
          <div><h3>Yours</h3><pre>{conflict.mine.content}</pre></div>
        </div>
      )}
      <div class="actions">
        <button type="button" onClick={keepMine}>Keep mine</button>
        <button type="button" class="secondary" onClick={takeTheirs}>Take theirs</button>
        <button type="button" class="secondary" onClick={copy}>Copy mine</button>
      </div>
      {copied && <p role="status">{copied}</p>}
      <details><summary>Your text</summary><textarea readOnly aria-label="Your text" value={conflict.mine.content} /></details>
    </section>
  );
}
