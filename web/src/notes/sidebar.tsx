import type { JSX } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api/client';
import { folderNameProblem, folderNameRefusal } from './folder-name';
import { changeFolder, createFolder, deleteFolder, type Folder, type TagCount } from './api';

/** What the notes list shows: everything, the archive, one folder (or the top level), or one tag. */
export type Scope =
  | { kind: 'all' }
  | { kind: 'archive' }
  | { kind: 'shared' }
  | { kind: 'folder'; id: string }
  | { kind: 'root' }
  | { kind: 'tag'; name: string };

/** The query string of a scope: the list's view lives in the address, so reload and Back keep it. */
export function scopeSearch(scope: Scope): string {
  switch (scope.kind) {
    case 'archive':
      return '?view=archive';
    case 'shared':
      return '?view=shared';
    case 'folder':
      return `?folder=${encodeURIComponent(scope.id)}`;
    case 'root':
      return '?folder=root';
    case 'tag':
      return `?tag=${encodeURIComponent(scope.name)}`;
    default:
      return '';
  }
}

export function scopeOf(search: string): Scope {
  const params = new URLSearchParams(search);
  const folder = params.get('folder');
  const tag = params.get('tag');
  if (params.get('view') === 'archive') return { kind: 'archive' };
  if (params.get('view') === 'shared') return { kind: 'shared' };
  if (folder === 'root') return { kind: 'root' };
  if (folder) return { kind: 'folder', id: folder };
  if (tag) return { kind: 'tag', name: tag };
  return { kind: 'all' };
}

/** A link to a scope, beside whatever note is open. */
export const scopeHref = (scope: Scope) => `${location.pathname}${scopeSearch(scope)}`;

/** The note a row drag carries (only this app's rows set it). */
export const NOTE_DRAG_TYPE = 'application/x-vellum-note';

interface SidebarProps {
  folders: Folder[];
  tags: TagCount[];
  scope: Scope;
  /** Called with a scope the sidebar itself moved to (a new folder; after a delete, everything). */
  onScope: (scope: Scope) => void;
  /** A link in it was followed (the drawer closes). */
  onPicked: () => void;
  /** Folders or notes changed: reload both. */
  onChanged: () => void;
  /** A note dropped on a folder (null: the top level). */
  onDropNote: (noteId: string, folderId: string | null) => void;
  open: boolean;
}

/** Folder paths by id (`Work/Plans`), for choosers. */
export function folderPaths(folders: Folder[]): Map<string, string> {
  const byId = new Map(folders.map((f) => [f.id, f]));
  const paths = new Map<string, string>();
  const pathOf = (id: string, depth = 0): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const folder = byId.get(id);
    if (folder === undefined || depth > 1000) return '';
    const path = folder.parent_id === null ? folder.name : `${pathOf(folder.parent_id, depth + 1)}/${folder.name}`;
    paths.set(id, path);
    return path;
  };
  for (const folder of folders) pathOf(folder.id);
  return paths;
}

/** The folder and everything below it: where it may not be moved. */
function subtree(folders: Folder[], id: string): Set<string> {
  const found = new Set([id]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of folders) {
      if (f.parent_id !== null && found.has(f.parent_id) && !found.has(f.id)) {
        found.add(f.id);
        grew = true;
      }
    }
  }
  return found;
}

type Form = { kind: 'new' } | { kind: 'rename'; folder: Folder } | { kind: 'move'; folder: Folder } | null;

/** Navigation "Folders" (the tree, the top level, the archive) and "Tags" (with counts). */
export function Sidebar({ folders, tags, scope, onScope, onPicked, onChanged, onDropNote, open }: SidebarProps) {
  const [form, setForm] = useState<Form>(null);
  const [name, setName] = useState('');
  const [parent, setParent] = useState('');
  const [error, setError] = useState('');
  /** What is wrong with the name typed, said by its field. */
  const [nameError, setNameError] = useState('');
  const nameField = useRef<HTMLInputElement>(null);
  const selected = scope.kind === 'folder' ? folders.find((f) => f.id === scope.id) : undefined;
  const paths = folderPaths(folders);
  const children = (parentId: string | null) =>
    folders.filter((f) => f.parent_id === parentId).sort((a, b) => a.name.localeCompare(b.name));

  const run = async (work: () => Promise<unknown>, naming = false) => {
    try {
      await work();
      setError('');
      setNameError('');
      setForm(null);
      onChanged();
    } catch (e) {
      if (naming && e instanceof ApiError && (e.status === 400 || e.status === 409)) {
        const said = folderNameRefusal(name, e.status, e.body, e.message);
        // A refusal of the name itself goes by the field; others (too many folders) below the form.
        if (e.status === 400 || said !== e.message) {
          setNameError(said);
          nameField.current?.focus();
          return;
        }
      }
      setError(errorMessage(e));
    }
  };
  const submit = (event: Event) => {
    event.preventDefault();
    if (form === null) return;
    if (form.kind !== 'move') {
      // Said before asking: the server's rule, and the names already beside it.
      const beside = form.kind === 'new' ? (selected?.id ?? null) : form.folder.parent_id;
      const siblings = children(beside)
        .filter((f) => form.kind === 'new' || f.id !== form.folder.id)
        .map((f) => f.name);
      const problem = folderNameProblem(name, siblings);
      if (problem !== null) {
        setNameError(problem);
        nameField.current?.focus();
        return;
      }
    }
    if (form.kind === 'new') {
      void run(async () => {
        const created = await createFolder(name, selected?.id ?? null);
        onScope({ kind: 'folder', id: created.id });
      }, true);
    } else if (form.kind === 'rename') {
      void run(() => changeFolder(form.folder.id, { name }), true);
    } else {
      void run(() => changeFolder(form.folder.id, { parent_id: parent === '' ? null : parent }));
    }
  };
  const remove = (folder: Folder) => {
    const ok = window.confirm(
      `Delete the folder “${folder.name}” and every folder in it? The notes inside go to the trash.`,
    );
    if (!ok) return;
    void run(async () => {
      await deleteFolder(folder.id);
      onScope({ kind: 'all' });
    });
  };

  const dropTarget = (folderId: string | null) => ({
    onDragOver: (e: DragEvent) => {
      if (e.dataTransfer?.types.includes(NOTE_DRAG_TYPE)) e.preventDefault();
    },
    onDrop: (e: DragEvent) => {
      const noteId = e.dataTransfer?.getData(NOTE_DRAG_TYPE);
      if (!noteId) return;
      e.preventDefault();
      onDropNote(noteId, folderId);
    },
  });
  const entry = (
    label: string,
    target: Scope,
    current: boolean,
    extra: ReturnType<typeof dropTarget> | Record<string, never> = {},
  ) => (
    <a
      class="nav-entry"
      href={scopeHref(target)}
      aria-current={current ? 'page' : undefined}
      onClick={onPicked}
      {...extra}
    >
      {label}
    </a>
  );
  const tree = (parentId: string | null): JSX.Element | null => {
    const list = children(parentId);
    if (list.length === 0) return null;
    return (
      <ul class="tree">
        {list.map((f) => (
          <li key={f.id}>
            <a
              class="nav-entry"
              href={scopeHref({ kind: 'folder', id: f.id })}
              onClick={onPicked}
              aria-current={scope.kind === 'folder' && scope.id === f.id ? 'page' : undefined}
              {...dropTarget(f.id)}
            >
              <span>{f.name}</span>{' '}
              <span class="count">
                {f.note_count}
                <span class="sr-only"> notes</span>
              </span>
            </a>
            {tree(f.id)}
          </li>
        ))}
      </ul>
    );
  };
  const forbidden = form?.kind === 'move' ? subtree(folders, form.folder.id) : new Set<string>();

  return (
    <aside id="sidebar" class={`sidebar ${open ? 'drawer-open' : ''}`}>
      <nav aria-label="Folders">
        <ul class="tree">
          <li>{entry('All notes', { kind: 'all' }, scope.kind === 'all')}</li>
          <li>{entry('Top level', { kind: 'root' }, scope.kind === 'root', dropTarget(null))}</li>
        </ul>
        {tree(null)}
        <ul class="tree">
          <li>{entry('Archive', { kind: 'archive' }, scope.kind === 'archive')}</li>
          <li>{entry('Shared with me', { kind: 'shared' }, scope.kind === 'shared')}</li>
        </ul>
        <div class="actions">
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setName('');
              setNameError('');
              setForm({ kind: 'new' });
            }}
          >
            New folder
          </button>
          {selected && (
            <>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setName(selected.name);
                  setNameError('');
                  setForm({ kind: 'rename', folder: selected });
                }}
              >
                Rename folder
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setParent(selected.parent_id ?? '');
                  setForm({ kind: 'move', folder: selected });
                }}
              >
                Move folder
              </button>
              <button type="button" class="danger" onClick={() => remove(selected)}>
                Delete folder
              </button>
            </>
          )}
        </div>
        {form !== null && (
          <form class="folder-form" onSubmit={submit}>
            {form.kind === 'move' ? (
              <>
                <label for="folder-parent">Move “{form.folder.name}” into</label>
                <select id="folder-parent" value={parent} onChange={(e) => setParent(e.currentTarget.value)}>
                  <option value="">Top level</option>
                  {folders
                    .filter((f) => !forbidden.has(f.id))
                    .map((f) => (
                      <option key={f.id} value={f.id}>
                        {paths.get(f.id)}
                      </option>
                    ))}
                </select>
              </>
            ) : (
              <>
                <label for="folder-name">Folder name</label>
                <input
                  id="folder-name"
                  ref={nameField}
                  value={name}
                  autoFocus
                  aria-invalid={nameError !== '' ? 'true' : undefined}
                  aria-describedby={nameError !== '' ? 'folder-name-error' : undefined}
                  onInput={(e) => {
                    setName(e.currentTarget.value);
                    setNameError('');
                  }}
                />
                {nameError && (
                  <p id="folder-name-error" class="field-error" role="alert">
                    {nameError}
                  </p>
                )}
                {form.kind === 'new' && selected && <p class="hint">Inside “{selected.name}”</p>}
              </>
            )}
            <div class="actions">
              <button type="submit">{form.kind === 'new' ? 'Create folder' : 'Apply'}</button>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setForm(null);
                  setError('');
                  setNameError('');
                }}
              >
                Cancel
              </button>
            </div>
          </form>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </nav>
      <nav aria-label="Tags">
        <h2 class="nav-heading">Tags</h2>
        {tags.length === 0 ? (
          <p class="hint">Write #words in a note to tag it.</p>
        ) : (
          <ul class="tree">
            {tags.map((t) => (
              <li key={t.name}>
                <a
                  class="nav-entry"
                  href={scopeHref({ kind: 'tag', name: t.name })}
                  onClick={onPicked}
                  aria-current={scope.kind === 'tag' && scope.name === t.name ? 'page' : undefined}
                >
                  <span>#{t.name}</span>{' '}
                  <span class="count">
                    {t.count}
                    <span class="sr-only"> notes</span>
                  </span>
                </a>
              </li>
            ))}
          </ul>
        )}
      </nav>
    </aside>
  );
}
