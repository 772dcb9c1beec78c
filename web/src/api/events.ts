import { useEffect } from 'preact/hooks';
import { session } from './client';

/** A change the server told of (GET /api/events): `data.id` is the note. */
export type LiveChange =
  | {
      type:
        | 'note.created'
        | 'note.updated'
        | 'note.filed'
        | 'note.trashed'
        | 'note.restored'
        | 'note.deleted'
        | 'share.changed';
      data: { id: string; version?: number; author_username?: string | null };
    }
  /**
   * Changes may have been missed (the server lost its channel to the other instances for a while,
   * or this tab's stream was cut and opened again): whatever is shown is fetched again.
   */
  | { type: 'resync'; data: { id?: undefined; reason: string } };

type Listener = (change: LiveChange) => void;
const listeners = new Set<Listener>();
let running = false;

/**
 * One stream per tab, read with fetch so the access token goes in a header (never in a URL, as
 * EventSource would need). It ends when the token expires: then it reconnects with a fresh one;
 * after a failure it waits a little longer each time, up to half a minute.
 */
async function run(): Promise<void> {
  let delay = 1000;
  // Set once a stream has been read: a new one after it may have missed changes in between.
  let opened = false;
  while (listeners.size > 0) {
    try {
      const token = await session.token();
      if (token === null) return;
      const response = await fetch('/api/events', { headers: { authorization: `Bearer ${token}` } });
      if (response.status === 401) {
        // The token's session has ended (the server closes the stream within 5 s of it for this):
        // unless a refresh brings a new one, the page says so at once. Before, it went on showing
        // the editor, and saves went through on the old token until the next refresh failed.
        if ((await session.token(true)) === null) {
          session.ended();
          return;
        }
        continue;
      }
      if (!response.ok || response.body === null) throw new Error(`events: ${response.status}`);
      delay = 1000;
      if (opened) tell({ type: 'resync', data: { reason: 'reconnected' } });
      opened = true;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (type !== undefined && data !== undefined) {
            tell({ type, data: JSON.parse(data) } as LiveChange);
          }
        }
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

function tell(change: LiveChange): void {
  for (const listener of [...listeners]) listener(change);
}

/** Calls `listener` for every live change while the component is shown. */
export function useLiveChanges(listener: Listener, deps: unknown[]): void {
  useEffect(() => {
    listeners.add(listener);
    if (!running) {
      running = true;
      void run().finally(() => {
        running = false;
      });
    }
    return () => {
      listeners.delete(listener);
    };
  }, deps);
}
