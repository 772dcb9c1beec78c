/**
 * The one way this client talks to IndexedDB (offline/store.ts keeps API answers, notes/drafts.ts
 * unsaved text): a database opened once, and each piece of work as a promise that never rejects.
 * Private modes, a blocked database and full disks give `undefined` (nothing kept), never an error
 * on screen — except a full disk, which is said (`onStorageFull`, `fullDatabases`): the person
 * should know that what they type is no longer kept on this device.
 */
export type Upgrade = (db: IDBDatabase, transaction: IDBTransaction, oldVersion: number) => void;

/** How a write ended: committed, refused because the device's storage is full, or failed otherwise. */
export type Written = 'ok' | 'full' | 'failed';

const full = new Set<string>();
const listeners = new Set<(databases: ReadonlySet<string>) => void>();

function setFull(name: string, isFull: boolean): void {
  if (full.has(name) === isFull) return;
  if (isFull) full.add(name);
  else full.delete(name);
  for (const listener of listeners) listener(full);
}

/** The databases whose last write was refused for want of space. */
export function fullDatabases(): ReadonlySet<string> {
  return full;
}

/** Called when a database's writes start or stop being refused for want of space. */
export function onStorageFull(listener: (databases: ReadonlySet<string>) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Chromium and Firefox name it so; Safari's older builds gave a DOMException with code 22. */
export function isQuotaError(error: unknown): boolean {
  return error instanceof DOMException && (error.name === 'QuotaExceededError' || error.code === 22);
}

export interface Database {
  /** One request in its own transaction: its result, or undefined when nothing could be read. */
  run<T>(
    store: string,
    mode: IDBTransactionMode,
    work: (store: IDBObjectStore) => IDBRequest<T>,
  ): Promise<T | undefined>;
  /**
   * Requests on several stores in one read-write transaction; settled when the transaction commits
   * (a quota is enforced at commit, after every request succeeded).
   */
  write(stores: string[], work: (transaction: IDBTransaction) => void): Promise<Written>;
}

export function database(name: string, version: number, upgrade: Upgrade): Database {
  let opened: Promise<IDBDatabase | null> | null = null;
  const open = (): Promise<IDBDatabase | null> => {
    opened ??= new Promise((resolve) => {
      if (typeof indexedDB === 'undefined') return resolve(null);
      const request = indexedDB.open(name, version);
      let blocked = false;
      request.onupgradeneeded = (event) => upgrade(request.result, request.transaction!, event.oldVersion);
      request.onsuccess = () => {
        const db = request.result;
        // A newer client in another tab upgrades the database: this tab lets go (and then works
        // without it, as the older version can no longer be opened).
        db.onversionchange = () => {
          db.close();
          opened = Promise.resolve(null);
        };
        // Opened after all, once the tab that blocked the upgrade let go.
        if (blocked) opened = Promise.resolve(db);
        resolve(db);
      };
      request.onerror = () => resolve(null);
      // A tab of an older client holds the previous version open (clients before this one do not
      // let go): work without the database until it closes, rather than wait on it.
      request.onblocked = () => {
        blocked = true;
        resolve(null);
      };
    });
    return opened;
  };

  return {
    async run(store, mode, work) {
      const db = await open();
      if (db === null) return undefined;
      return new Promise((resolve) => {
        try {
          const transaction = db.transaction(store, mode);
          const request = work(transaction.objectStore(store));
          if (mode === 'readonly') {
            request.onsuccess = () => resolve(request.result);
            request.onerror = () => resolve(undefined);
            return;
          }
          transaction.oncomplete = () => {
            setFull(name, false);
            resolve(request.result);
          };
          transaction.onabort = () => {
            if (isQuotaError(transaction.error)) setFull(name, true);
            resolve(undefined);
          };
        } catch (error) {
          if (isQuotaError(error)) setFull(name, true);
          resolve(undefined);
        }
      });
    },

    async write(stores, work) {
      const db = await open();
      if (db === null) return 'failed';
      return new Promise((resolve) => {
        try {
          const transaction = db.transaction(stores, 'readwrite');
          transaction.oncomplete = () => {
            setFull(name, false);
            resolve('ok');
          };
          transaction.onabort = () => {
            const quota = isQuotaError(transaction.error);
            if (quota) setFull(name, true);
            resolve(quota ? 'full' : 'failed');
          };
          work(transaction);
        } catch (error) {
          const quota = isQuotaError(error);
          if (quota) setFull(name, true);
          resolve(quota ? 'full' : 'failed');
        }
      });
    },
  };
}
