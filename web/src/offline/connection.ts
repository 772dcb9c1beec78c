import { useEffect, useState } from 'preact/hooks';
import { serviceReady } from './api';

/**
 * Whether the service can be reached, as this tab last found out: the browser's `online` and
 * `offline` events, and every API answer or network failure (device-copy.ts reports them: a server
 * that is down while the device is online is offline too). After a failure the service is asked
 * again now and then (GET /readyz) until it answers. Each return of the connection counts one
 * `wake`: autosave and the saving of drafts kept on this device start again on it, without a key.
 */
export interface Connection {
  offline: boolean;
  /** How many times the connection came back (a dependency for effects that retry). */
  wakes: number;
  /** When what is shown offline was last fetched, if something was shown from this device. */
  asOf: string | null;
}

let state: Connection = {
  offline: typeof navigator !== 'undefined' && navigator.onLine === false,
  wakes: 0,
  asOf: null,
};
const listeners = new Set<(state: Connection) => void>();
let probe: ReturnType<typeof setTimeout> | null = null;
let probeDelay = 2000;

function publish(next: Connection): void {
  state = next;
  for (const listener of listeners) listener(state);
}

function stopProbe(): void {
  if (probe !== null) clearTimeout(probe);
  probe = null;
  probeDelay = 2000;
}

function scheduleProbe(): void {
  if (probe !== null || typeof window === 'undefined') return;
  probe = setTimeout(async () => {
    probe = null;
    const up = await serviceReady();
    if (up) reachedService();
    else {
      probeDelay = Math.min(probeDelay * 2, 30_000);
      if (state.offline) scheduleProbe();
    }
  }, probeDelay);
}

/** An answer came from the service (any status): online. */
export function reachedService(): void {
  stopProbe();
  if (state.offline) publish({ offline: false, wakes: state.wakes + 1, asOf: null });
  else if (state.asOf !== null) publish({ ...state, asOf: null });
}

/** A request failed for want of a network (fetch's TypeError). */
export function unreachable(): void {
  if (!state.offline) publish({ ...state, offline: true });
  scheduleProbe();
}

/** Something on screen comes from this device, fetched at `savedAt`; the oldest such is told. */
export function shownFromDevice(savedAt: string): void {
  if (state.asOf === null || savedAt < state.asOf) publish({ ...state, offline: true, asOf: savedAt });
  scheduleProbe();
}

export function currentConnection(): Connection {
  return state;
}

export function onConnection(listener: (state: Connection) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useConnection(): Connection {
  const [now, setNow] = useState(state);
  useEffect(() => {
    setNow(state);
    return onConnection(setNow);
  }, []);
  return now;
}

/** fetch's own failure: no network, or the service is down. */
export function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError && /fetch|network|load failed/i.test(error.message);
}

if (typeof window !== 'undefined') {
  window.addEventListener('online', () => {
    // The device is back on a network: try at once (the service answering confirms it).
    stopProbe();
    probeDelay = 0;
    scheduleProbe();
    probeDelay = 2000;
  });
  window.addEventListener('offline', () => unreachable());
}
