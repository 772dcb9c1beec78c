import type { User } from '../api/client';

/**
 * What this device keeps of the signed-in account to show offline (IndexedDB, as drafts.ts keeps
 * unsaved text): the API's answers to the GETs of notes, lists and versions seen before, keyed by
 * the user's id and the address, and who was signed in last (to open offline). One account at a
 * time: everything goes on logout and when another account signs in (forgetDevice).
 */
export interface KeptAnswer {
  body: string;
  contentType: string;
  etag: string | null;
  total: string | null;
  savedAt: string;
}

const DATABASE = 'vellum-offline';
const ANSWERS = 'answers';
const META = 'meta';

let opened: Promise<IDBDatabase | null> | null = null;
function open(): Promise<IDBDatabase | null> {
  opened ??= new Promise((resolve) => {
    if (typeof indexedDB === 'undefined') return resolve(null);
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore(ANSWERS);
      request.result.createObjectStore(META);
    };
    request.onsuccess = () => resolve(request.result);
    // Private modes and full disks: nothing kept, never an error on screen.
    request.onerror = () => resolve(null);
  });
  return opened;
}

async function run<T>(
  store: string,
  mode: IDBTransactionMode,
  work: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T | undefined> {
  const db = await open();
  if (db === null) return undefined;
  return new Promise((resolve) => {
    try {
      const request = work(db.transaction(store, mode).objectStore(store));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => resolve(undefined);
    } catch {
      resolve(undefined);
    }
  });
}

const key = (userId: string, url: string) => `${userId} ${url}`;

export const keepAnswer = (userId: string, url: string, answer: KeptAnswer) =>
  run(ANSWERS, 'readwrite', (s) => s.put(answer, key(userId, url)));
export const findAnswer = (userId: string, url: string) =>
  run<KeptAnswer | undefined>(ANSWERS, 'readonly', (s) => s.get(key(userId, url)));

export const rememberUser = (user: User) => run(META, 'readwrite', (s) => s.put(user, 'user'));
export const rememberedUser = async (): Promise<User | null> =>
  (await run<User | undefined>(META, 'readonly', (s) => s.get('user'))) ?? null;

/** Drops everything kept for any account. */
export async function forgetKept(): Promise<void> {
  await Promise.all([run(ANSWERS, 'readwrite', (s) => s.clear()), run(META, 'readwrite', (s) => s.clear())]);
}
