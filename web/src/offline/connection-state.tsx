import { useEffect, useState } from 'preact/hooks';
import { hasLeaveGuard } from '../app/router';
import { DRAFTS_DATABASE } from '../notes/drafts';
import { fullDatabases, onStorageFull } from '../shared/idb';
import { useConnection } from './connection';

const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/** Always on screen while offline: that it is, and how old what is shown may be. */
export function ConnectionBanner() {
  const { offline, asOf } = useConnection();
  return (
    <p class={`connection ${offline ? 'offline' : ''}`} role="status" aria-live="polite">
      {offline ? (asOf === null ? 'Offline' : `Offline — showing notes as of ${time(asOf)}`) : ''}
    </p>
  );
}

/**
 * The device's storage is full (QuotaExceededError): said plainly, and gone once a write fits again.
 * The offline cache gives way first (offline/store.ts), so this stays only while even that is not
 * enough.
 */
export function StorageFullNotice() {
  const [full, setFull] = useState<ReadonlySet<string>>(() => new Set(fullDatabases()));
  useEffect(() => onStorageFull((databases) => setFull(new Set(databases))), []);
  if (full.size === 0) return null;
  return (
    <p class="notice storage-full" role="alert">
      {full.has(DRAFTS_DATABASE)
        ? 'Storage on this device is full: what you type now is not kept on it. Save while online, or free some space.'
        : 'Storage on this device is full: notes you open now are not kept for reading offline.'}
    </p>
  );
}

/**
 * "A new version of Vellum is ready — Reload": the service worker (app/pwa.ts, loaded once the
 * page is idle) found a newer client. Never reloads by itself; with unsaved text, Reload asks first
 * (the text is kept on this device either way).
 */
export function UpdatePrompt() {
  const [activate, setActivate] = useState<(() => void) | null>(null);
  useEffect(() => {
    const start = () =>
      void import('../app/pwa').then(
        (pwa) => pwa.startServiceWorker((next) => setActivate(() => next)),
        () => undefined,
      );
    if (document.readyState === 'complete') setTimeout(start, 0);
    else window.addEventListener('load', start, { once: true });
  }, []);
  if (activate === null) return null;
  return (
    <div class="notice update" role="status">
      A new version of Vellum is ready —{' '}
      <button
        type="button"
        onClick={() => {
          if (
            !hasLeaveGuard() ||
            window.confirm(
              'This note has unsaved changes. They stay on this device and come back after the reload. Reload now?',
            )
          )
            activate();
        }}
      >
        Reload
      </button>
    </div>
  );
}
