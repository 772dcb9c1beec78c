import { database } from '../shared/idb';

/**
 * Unsaved text kept on this device (IndexedDB) as it is typed, so a reload, a crash, a closed tab,
 * a lost connection or an ended session loses nothing: the editor offers it back next time, against
 * the version it was typed on. Per account and note; removed once saved or discarded.
 */
export interface Draft {
  title: string;
  content: string;
  /** The version the text was typed on: a save of it is conditional on that version. */
  baseVersion: number;
  savedAt: string;
}

export const DRAFTS_DATABASE = 'vellum-drafts';
const STORE = 'drafts';

// Kept apart from the offline cache (offline/store.ts), which may drop what it keeps; this never does.
const db = database(DRAFTS_DATABASE, 1, (d) => d.createObjectStore(STORE));
const run = <T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T>) => db.run(STORE, mode, work);

const key = (userId: string, noteId: string) => `${userId}:${noteId}`;

export const saveDraft = (userId: string, noteId: string, draft: Draft) =>
  run('readwrite', (s) => s.put(draft, key(userId, noteId)));
export const loadDraft = (userId: string, noteId: string) =>
  run<Draft | undefined>('readonly', (s) => s.get(key(userId, noteId)));
export const clearDraft = (userId: string, noteId: string) => run('readwrite', (s) => s.delete(key(userId, noteId)));
/** Every draft on this device, of every account: at logout and when another account signs in. */
export const clearAllDrafts = () => run('readwrite', (s) => s.clear());
/** The drafts of an account, with the note each is for (`new`: a new note). */
export async function listDrafts(userId: string): Promise<{ noteId: string; draft: Draft }[]> {
  const prefix = `${userId}:`;
  const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`);
  const [keys, values] = await Promise.all([
    run<IDBValidKey[]>('readonly', (s) => s.getAllKeys(range)),
    run<Draft[]>('readonly', (s) => s.getAll(range)),
  ]);
  return (keys ?? []).map((k, i) => ({ noteId: String(k).slice(prefix.length), draft: values![i]! }));
}
