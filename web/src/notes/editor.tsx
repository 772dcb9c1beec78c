import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { Markdown } from '../markdown/markdown';
import { createNote, deleteNote, getNote, saveVersion, versionText, type Folder, type Note } from './api';
import { useAttacher } from './attach';
import type { Conflict } from './conflict-panel';
import type { Region } from './merge-choices';
import { clearDraft } from './drafts';
import { EditorToolbar } from './editor-toolbar';
import { NEW, unsavedNote, type EditorNow, type Restored, type Role } from './editor-state';
import { FilingBar } from './filing';
import { MarkdownEditor } from './markdown-editor';
import { setTask } from './task-boxes';
import { useNoteText } from './note-text';
import { useAutosave, useSaveShortcut } from './use-autosave';
import { useDraftKeeping } from './use-drafts';
import { dropLeaveGuard, useLeaveGuard } from './use-leave-guard';
import { useNewerVersion } from './use-newer-version';
import { useNoteLoad } from './use-note-load';
import { currentConnection, isNetworkError } from '../offline/connection';
import { useLive } from './use-live';
import type { MarkdownEditorHandle } from './codemirror';
import { liveEditing } from '../app/device-settings';
import { lazy } from '../app/lazy';

// Shown only when asked for (Share) or when a save meets changes made elsewhere: chunks of their own.
const SharePanel = lazy(() => import('../sharing/share-panel').then((m) => m.SharePanel));
const ConflictPanel = lazy(() => import('./conflict-panel').then((m) => m.ConflictPanel));

export { NEW } from './editor-state';

/**
 * One note: title, Markdown text and its preview. Saves on request (button, Ctrl/Cmd+S) and, unless
 * turned off on this device, by itself a moment after the typing stops (device-settings.ts); each
 * save conditional on the version the user started from (If-Match); a 412 never overwrites, it
 * shows what changed and lets the user choose. The text lives in the editor (note-text.ts): it is
 * read from there to save, to keep a draft and to show a preview, never copied on each keystroke.
 */
export function Editor({
  noteId,
  me,
  myName,
  onChanged,
  onDeleted,
  onCreated,
  folders,
  folderId = null,
  newTitle = 'Untitled',
}: {
  /** `new`: a note not on the server yet, created by its first save. */
  noteId: string;
  me: string;
  /** The username, shown to the others beside this person's cursor when editing live. */
  myName: string;
  onChanged: () => void;
  onDeleted: (title: string, id: string) => void;
  /** The first save of a new note created it, with this id. */
  onCreated?: (id: string) => void;
  folders: Folder[];
  /** Where a new note goes. */
  folderId?: string | null;
  /** A new note's title (a `[[link]]` to a note not written yet). */
  newTitle?: string;
}) {
  // A new note is on screen at once (nothing to fetch), so its title takes the very first keys.
  const [note, setNote] = useState<Note | null>(() => (noteId === NEW ? unsavedNote(me, folderId) : null));
  const [title, setTitle] = useState(() => (noteId === NEW ? newTitle : ''));
  const { text, edits, edited } = useNoteText('');
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
  /** The phone's "More" menu: secondary actions and the filing bar. */
  const [more, setMore] = useState(false);
  const [role, setRole] = useState<Role>(null);
  const [restored, setRestored] = useState<Restored | null>(null);
  const titleRef = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const inserter = useRef<((text: string) => void) | null>(null);
  const starter = useRef<((text: string) => void) | null>(null);
  const attacher = useAttacher((inserted) => inserter.current?.(inserted));
  const cm = useRef<MarkdownEditorHandle | null>(null);
  const [cmReady, setCmReady] = useState(false);
  /** Live co-editing (use-live.ts): while connected, the shared document holds the text, not a save. */
  const isLive = useRef(false);
  const changed = note !== null && (title !== note.title || !text.same(note.content));
  const now = useRef<EditorNow>({ note, dirty: changed, title, role });
  const live = useLive({
    // Not for a new note (nothing to share yet), a viewer (who reads), or a restored draft (its
    // choice first: Save merges it, Discard drops it).
    enabled: liveEditing.on() && note !== null && note.version > 0 && role !== 'viewer' && restored === null,
    ready: cmReady,
    noteId,
    name: myName,
    handle: cm,
    text,
    now,
    saving: busy,
    onTitle: setTitle,
  });
  isLive.current = live.state.kind === 'live';
  const ended = live.state.kind === 'ended';
  /**
   * Made a viewer by the owner since the note opened (told live; it holds while the socket is away):
   * the editor takes no typing and saves nothing.
   */
  const onlyReading = live.demoted;
  /** Unsaved: while live, only what has not reached the server yet. */
  const dirty = live.state.kind === 'live' ? live.state.pending : ended ? false : changed;
  now.current = { note, dirty, title, role };
  const created = useRef<string | null>(null);
  /** Set once the user chose to leave without saving: the draft went with the answer. */
  const discarded = useRef(false);

  /** Shows a version from the server in place of what is on screen. */
  const loadVersion = (server: Note, by: string | null = null) => {
    if (isLive.current) {
      // Live: the version the server made of the shared text; the text on screen is already newer.
      setNote(server);
      newer.clear();
      setStatus(`Version ${server.version} saved`);
      return;
    }
    setNote(server);
    setTitle(server.title);
    text.set(server.content);
    setConflict(null);
    newer.clear();
    setRestored(null);
    setStatus(
      server.version === 0
        ? ''
        : by === null
          ? `Loaded version ${server.version}`
          : `Version ${server.version}, saved by ${by}, is shown`,
    );
  };
  const newer = useNewerVersion({ noteId, note, dirty, now, show: loadVersion });

  useNoteLoad({
    noteId,
    me,
    folderId,
    created,
    now,
    onOpened: (opened) => {
      setRole(opened.role);
      setNote(opened.note);
      if (opened.newer !== null) newer.offer(opened.newer);
      setTitle(opened.title);
      text.set(opened.content);
      setRestored(opened.restored);
      setEditing(opened.editing);
    },
    onRestored: (draft, restoredFrom) => {
      setTitle(draft.title);
      text.set(draft.content);
      setRestored(restoredFrom);
    },
    onFailed: setError,
  });

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
    } else formRef.current?.focus({ preventScroll: true });
  }, [note]);

  useDraftKeeping({
    me,
    noteId,
    now,
    text,
    edits,
    discarded,
    unsaved: () => (isLive.current ? live.pending.current : now.current.dirty),
  });
  // Leaving without saving, asked and answered: the draft goes too (a closed tab keeps it).
  useLeaveGuard(live.state.kind === 'live' ? live.pending : dirty, () => {
    // Offline the text stays kept here and is saved on reconnection (offline/sync.ts).
    if (currentConnection().offline) return;
    discarded.current = true;
    void clearDraft(me, noteId);
  });

  const save = async (base = note, mine = { title, content: text.get() }) => {
    if (base === null || busy || ended || onlyReading) return;
    // Live: every change is already with the server, which makes the versions.
    if (isLive.current) return;
    // An unchanged save would only make an identical version.
    if (mine.title === base.title && mine.content === base.content) {
      setStatus(base.version === 0 ? 'Nothing to save yet' : 'No changes to save');
      return;
    }
    setBusy(true);
    setError('');
    setStatus('Saving…');
    try {
      if (base.version === 0) {
        // The first save of a new note creates it (until then nothing was on the server).
        const made = await createNote({ ...mine, folder_id: base.folder_id });
        created.current = made.id;
        // The same note on screen: the focus stays where the user is typing.
        focusedFor.current = made.id;
        setNote(made);
        setStatus('Saved as version 1');
        void clearDraft(me, NEW);
        onCreated?.(made.id);
        return;
      }
      const answer = await saveVersion(base.id, base.version, mine);
      if (answer === 'conflict' || 'conflicts' in answer) {
        // Overlapping changes (or the note moved on twice while merging): nothing was saved. The
        // panel shows the merge, each overlapping place the server named with both texts.
        const [server, baseText, { regionsFromConflicts }] = await Promise.all([
          getNote(base.id),
          versionText(base.id, base.version, base),
          import('./merge-regions'),
          // Fetched with the rest, so the panel shows with the merge, not a round trip after it.
          ConflictPanel.preload(),
        ]);
        // The hunks describe the version the server merged with; saved over again since (or a 412,
        // without hunks), or the base no longer kept here: the whole text is the place to choose,
        // both sides kept — coarser, never lossy.
        let regions: Region[] | null =
          answer !== 'conflict' && server.version === answer.current
            ? regionsFromConflicts(baseText.content, mine.content, server.content, answer.conflicts)
            : null;
        regions ??=
          mine.content === server.content
            ? [{ ok: mine.content }]
            : [{ ours: mine.content, theirs: server.content, base: baseText.content }];
        setConflict({ server, base: baseText, mine, regions });
        setStatus('');
        return;
      }
      if ('merged' in answer) {
        // Saved together with changes made elsewhere meanwhile: they join the text on screen where
        // they were made; the cursor, and anything typed while this save ran, stay.
        const merged = answer.merged;
        text.apply(mine.content, merged.content);
        if (now.current.title === mine.title) setTitle(merged.title);
        setNote(merged);
        newer.clear();
        setConflict(null);
        setRestored(null);
        setStatus(`Saved as version ${answer.saved}, together with changes saved elsewhere meanwhile`);
        onChanged();
        return;
      }
      // The text stays as it is: what was typed while the save ran is newer, and still unsaved.
      setNote({ ...base, ...mine, version: answer.saved, updated_at: new Date().toISOString() });
      setConflict(null);
      setRestored(null);
      setStatus(`Saved as version ${answer.saved}`);
      onChanged();
    } catch (e) {
      // Unreachable: the text stays kept on this device, the toolbar says so, and it is saved
      // when the connection comes back (useAutosave); no error that reads as if nothing was lost.
      if (!isNetworkError(e)) setError(errorMessage(e));
      setStatus('');
    } finally {
      setBusy(false);
    }
  };

  const saveNow = () => void save();
  useSaveShortcut(saveNow);

  // A task box ticked in the rendered note changes its `[ ]` in the text, which is saved at once as
  // any save is (a version, merged with changes made elsewhere, a conflict shown); live, the shared
  // text takes it. A tick during a save is saved when that save ends.
  const saveAfter = useRef(false);
  const tickTask = (index: number, done: boolean, shown: number): boolean => {
    const before = text.get();
    const after = setTask(before, index, done, shown);
    if (after === null) {
      setError('This box could not be matched with a line of the text: change it in the editor (Edit).');
      return false;
    }
    text.set(after);
    if (busy) saveAfter.current = true;
    else void save(note, { title, content: after });
    return true;
  };
  useEffect(() => {
    if (busy || !saveAfter.current) return;
    saveAfter.current = false;
    saveNow();
  }, [busy]);
  const canTick = role !== 'viewer' && !ended && !onlyReading && conflict === null;
  // Saved by itself once the typing pauses — also over a newer version saved elsewhere (the save
  // merges with it), but not over a conflict or a restored draft, which wait for the user's choice.
  useAutosave(
    saveNow,
    dirty && role !== 'viewer' && !onlyReading && conflict === null && restored === null && !isLive.current && !ended,
    [title, edits],
    note,
  );

  const remove = async () => {
    // The trash keeps what was saved, not what is typed: deleting unsaved text asks first.
    if (dirty && !window.confirm('This note has unsaved changes, which the trash will not keep. Delete it anyway?'))
      return;
    try {
      await deleteNote(noteId);
      discarded.current = true;
      void clearDraft(me, noteId);
      dropLeaveGuard();
      setNote(null);
      onDeleted(title || 'Untitled', noteId);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  if (note === null)
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  const owner = role === null;
  const canEdit = role !== 'viewer';
  const onServer = note.version > 0;
  const offered = newer.newer;
  return (
    <form
      class="editor"
      ref={formRef}
      tabIndex={-1}
      aria-label="Note"
      onSubmit={(e) => {
        e.preventDefault();
        saveNow();
      }}
    >
      <EditorToolbar
        note={note}
        role={ended || onlyReading ? 'viewer' : role}
        dirty={dirty && live.state.kind !== 'live'}
        status={
          live.state.kind === 'live'
            ? `Live${live.state.people.length > 0 ? ` with ${live.state.people.join(', ')}` : ''} · ${
                !live.state.writable ? 'You can now only read this note' : live.state.pending ? 'Saving…' : 'Saved'
              }`
            : status
        }
        busy={busy}
        editing={editing}
        preview={preview}
        sharing={sharing}
        attachButton={attacher.button}
        more={more}
        on={{
          toggleMore: () => setMore(!more),
          toggleEditing: () => setEditing(!editing),
          togglePreview: () => setPreview(!preview),
          toggleSharing: () => setSharing(!sharing),
          remove,
        }}
      />
      {!onServer ? (
        <p class="muted">A new note: it is kept on this device until you save it.</p>
      ) : owner ? (
        <FilingBar
          open={more}
          note={note}
          folders={folders}
          onFiled={(filing) => {
            setNote({ ...note, ...filing });
            onChanged();
          }}
        />
      ) : (
        <p class="notice shared-badge">
          Shared with you: you can {role === 'editor' && !onlyReading ? 'read and edit' : 'read'} this note.
        </p>
      )}
      {newer.gone && (
        <p class="error" role="alert">
          {newer.gone}
        </p>
      )}
      {restored && dirty && (
        <div class="notice" role="status">
          {restored.version === 0
            ? 'Unsaved text of a new note from this device was restored.'
            : `Unsaved text from this device, typed on version ${restored.version}, was restored.`}{' '}
          <button type="button" class="secondary" onClick={() => loadVersion(restored.server)}>
            Discard it
          </button>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {live.state.kind === 'ended' && (
        <p class="error" role="alert">
          {live.state.why}
        </p>
      )}
      {live.state.kind === 'off' && live.state.why !== undefined && <p role="status">{live.state.why}</p>}
      {live.state.kind === 'live' && !live.state.writable && live.state.pending && (
        // Typed just before the owner made this person a viewer: the server dropped it, and it is
        // still here (the editor and the draft on this device), never silently gone.
        <p class="notice" role="status">
          Your last changes had not reached the others when you were made a viewer: they stay here for you to copy, and
          reach the others if you are made an editor again.
        </p>
      )}
      {attacher.message}
      {sharing && <SharePanel noteId={noteId} version={note.version} onClose={() => setSharing(false)} />}
      {offered && offered.version > note.version && !conflict && live.state.kind !== 'live' && (
        <div class="notice" role="status">
          Version {offered.version} of this note was saved{' '}
          {newer.newerBy === null ? 'elsewhere' : `by ${newer.newerBy}`}.{' '}
          {dirty ? (
            'Saving brings its changes into your text; where you both changed the same lines, you choose.'
          ) : (
            <button type="button" class="secondary" onClick={() => loadVersion(offered)}>
              Load version {offered.version}
            </button>
          )}
        </div>
      )}
      {conflict && (
        <ConflictPanel
          conflict={conflict}
          saveMerged={(merged) => {
            // What was typed while the panel was open stays (it joins the merged text).
            text.apply(conflict.mine.content, merged.content);
            if (now.current.title === conflict.mine.title) setTitle(merged.title);
            const title = now.current.title === conflict.mine.title ? merged.title : now.current.title;
            void save(conflict.server, { title, content: text.get() });
          }}
          takeTheirs={() => loadVersion(conflict.server)}
        />
      )}
      {(!canEdit || !editing) && (
        <article class="reading" aria-labelledby="reading-title">
          <h2 class="note-title" id="reading-title">
            {(canEdit ? title : note.title) || 'Untitled'}
          </h2>
          <Markdown
            source={canEdit ? text.get() : note.content}
            label="Note"
            remoteKey={note.version > 0 ? note.id : undefined}
            onTask={canTick ? tickTask : undefined}
          />
        </article>
      )}
      {/* Hidden, not gone, while reading: the editor keeps its text, cursor and undo history. */}
      {canEdit && (
        <div class="writing" hidden={!editing}>
          <label for="title">Title</label>
          <input
            id="title"
            ref={titleRef}
            value={title}
            maxLength={200}
            readOnly={ended || onlyReading}
            onInput={(e) => {
              setTitle(e.currentTarget.value);
              live.session.current?.setTitle(e.currentTarget.value);
            }}
            onKeyDown={(e) => {
              // Enter ends the title, as in a word processor: the text after the cursor becomes the
              // first line of the body and the cursor goes to the body's start (never a save, never
              // the title run on).
              if (e.key !== 'Enter' || e.isComposing || e.shiftKey || e.ctrlKey || e.metaKey || e.altKey) return;
              e.preventDefault();
              const box = e.currentTarget;
              const at = box.selectionStart ?? box.value.length;
              const rest = box.value.slice(box.selectionEnd ?? at).trim();
              const kept = box.value.slice(0, at).trimEnd();
              setTitle(kept);
              live.session.current?.setTitle(kept);
              starter.current?.(rest === '' ? '' : text.get() === '' ? rest : `${rest}\n`);
            }}
          />
          <div class={`panes ${preview ? 'with-preview' : ''}`}>
            <div class="pane">
              <div class="field-label">Content</div>
              <MarkdownEditor
                text={text}
                label="Content"
                onChange={edited}
                onSave={saveNow}
                onFiles={attacher.attach}
                inserter={inserter}
                starter={starter}
                onTopLine={preview ? setTopLine : undefined}
                handle={cm}
                onReady={() => setCmReady(true)}
              />
            </div>
            {preview && editing && (
              <Markdown
                source={text.get()}
                label="Preview"
                remoteKey={note.version > 0 ? note.id : undefined}
                line={topLine}
                onTask={canTick ? tickTask : undefined}
              />
            )}
          </div>
        </div>
      )}
    </form>
  );
}
