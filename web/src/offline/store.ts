import type { User } from '../api/client';
import { database, onStorageFull } from '../shared/idb';

/**
 * What this device keeps of the signed-in account to show offline (IndexedDB, as drafts.ts keeps
 * unsaved text): the API's answers to the GETs of notes, lists and versions seen before, keyed by
 * the user's id and the address, and who was signed in last (to open offline). One account at a
 * time: everything goes on logout and when another account signs in (forgetDevice).
 *
 * A cache, so bounded (docs/web-client.md, "Offline and installing"): at most LIMITS.answers
 * answers and LIMITS.bytes bytes of them; past either, the answers fetched longest ago go first.
 * Unsaved text is never among them: drafts live in a database of their own (notes/drafts.ts), and
 * when the device's storage is full it is this cache that makes room for them.
 */
export interface KeptAnswer {
  body: string;
  contentType: string;
  etag: string | null;
  total: string | null;
  savedAt: string;
}

/** The size of each kept answer, in a store of its own so that trimming never reads the bodies. */
interface Size {
  savedAt: string;
  bytes: number;
}

/** About 1,000 notes with their list pages and a few versions each; an 8 MB note still fits. */
export const LIMITS = { answers: 3000, bytes: 50 * 1024 * 1024 };

const NAME = 'vellum-offline';
const ANSWERS = 'answers';
const META = 'meta';
const SIZES = 'sizes';

const encoder = new TextEncoder();
const sizeOf = (answer: KeptAnswer) => encoder.encode(answer.body).length + 200;

const db = database(NAME, 2, (d, transaction, oldVersion) => {
  if (oldVersion < 1) {
    d.createObjectStore(ANSWERS);
    d.createObjectStore(META);
  }
  if (oldVersion < 2) {
    // Answers kept by the first version of the client are measured once, so none escapes the limit.
    const sizes = d.createObjectStore(SIZES);
    const answers = transaction.objectStore(ANSWERS);
    answers.openCursor().onsuccess = (event) => {
      const cursor = (event.target as IDBRequest<IDBCursorWithValue | null>).result;
      if (cursor === null) return;
      const answer = cursor.value as KeptAnswer;
      sizes.put({ savedAt: answer.savedAt, bytes: sizeOf(answer) } satisfies Size, cursor.key);
      cursor.continue();
    };
  }
});

const key = (userId: string, url: string) => `${userId} ${url}`;

/**
 * Removes the answers fetched longest ago until at most `answers` answers of at most `bytes` bytes
 * remain. Returns how many went.
 */
export async function trimKept(limits: { answers: number; bytes: number } = LIMITS): Promise<number> {
  const [keys, sizes] = await Promise.all([
    db.run<IDBValidKey[]>(SIZES, 'readonly', (s) => s.getAllKeys()),
    db.run<Size[]>(SIZES, 'readonly', (s) => s.getAll()),
  ]);
  if (keys === undefined || sizes === undefined || keys.length !== sizes.length) return 0;
  const entries = keys.map((k, i) => ({ key: k, ...sizes[i]! }));
  let bytes = entries.reduce((sum, e) => sum + e.bytes, 0);
  let count = entries.length;
  if (count <= limits.answers && bytes <= limits.bytes) return 0;
  entries.sort((a, b) => (a.savedAt < b.savedAt ? -1 : a.savedAt > b.savedAt ? 1 : 0));
  const gone: IDBValidKey[] = [];
  for (const entry of entries) {
    if (count <= limits.answers && bytes <= limits.bytes) break;
    gone.push(entry.key);
    count -= 1;
    bytes -= entry.bytes;
  }
  const written = await db.write([ANSWERS, SIZES], (t) => {
    for (const k of gone) {
      t.objectStore(ANSWERS).delete(k);
      t.objectStore(SIZES).delete(k);
    }
  });
  return written === 'ok' ? gone.length : 0;
}

/** One trim at a time, and one more after it when answers were kept meanwhile. */
let trimming: Promise<unknown> | null = null;
let again = false;
function scheduleTrim(): void {
  if (trimming !== null) {
    again = true;
    return;
  }
  trimming = trimKept().finally(() => {
    trimming = null;
    if (again) {
      again = false;
      scheduleTrim();
    }
  });
}

/** Half of what is kept, the oldest half: room for unsaved text when the device's storage is full. */
async function makeRoom(): Promise<void> {
  const count = (await db.run<number>(SIZES, 'readonly', (s) => s.count())) ?? 0;
  if (count > 0) await trimKept({ answers: Math.floor(count / 2), bytes: Number.POSITIVE_INFINITY });
}

// Unsaved text could not be kept for want of space: the cache gives way (the next keystroke's
// draft then fits). This cache's own writes make room themselves (keepAnswer).
onStorageFull((databases) => {
  if ([...databases].some((name) => name !== NAME)) void makeRoom();
});

export async function keepAnswer(userId: string, url: string, answer: KeptAnswer): Promise<void> {
  const bytes = sizeOf(answer);
  // Larger than the whole cache: not kept (an older copy of it would be wrong).
  if (bytes > LIMITS.bytes) {
    await forgetAnswer(userId, url);
    return;
  }
  const k = key(userId, url);
  const put = () =>
    db.write([ANSWERS, SIZES], (t) => {
      t.objectStore(ANSWERS).put(answer, k);
      t.objectStore(SIZES).put({ savedAt: answer.savedAt, bytes } satisfies Size, k);
    });
  // Full: the oldest half goes and the answer is tried once more; still full, it is not kept.
  if ((await put()) === 'full') {
    await makeRoom();
    await put();
  }
  scheduleTrim();
}

async function forgetAnswer(userId: string, url: string): Promise<void> {
  const k = key(userId, url);
  await db.write([ANSWERS, SIZES], (t) => {
    t.objectStore(ANSWERS).delete(k);
    t.objectStore(SIZES).delete(k);
  });
}

export const findAnswer = (userId: string, url: string) =>
  db.run<KeptAnswer | undefined>(ANSWERS, 'readonly', (s) => s.get(key(userId, url)));

export const rememberUser = (user: User) => db.run(META, 'readwrite', (s) => s.put(user, 'user'));
export const rememberedUser = async (): Promise<User | null> =>
  (await db.run<User | undefined>(META, 'readonly', (s) => s.get('user'))) ?? null;

/** What the kept answers take: how many, and their bytes (the body's UTF-8 plus a little for the rest). */
export async function keptSize(): Promise<{ answers: number; bytes: number }> {
  const sizes = (await db.run<Size[]>(SIZES, 'readonly', (s) => s.getAll())) ?? [];
  return { answers: sizes.length, bytes: sizes.reduce((sum, s) => sum + s.bytes, 0) };
}

/** Drops everything kept for any account. */
export async function forgetKept(): Promise<void> {
  await db.write([ANSWERS, SIZES, META], (t) => {
    for (const store of [ANSWERS, SIZES, META]) t.objectStore(store).clear();
  });
}
