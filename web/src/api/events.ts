import { useEffect } from 'preact/hooks';
import { session } from './client';

/** A change the server told of (GET /api/events): `data.id` is the note. */
export interface LiveChange {
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
  while (listeners.size > 0) {
    try {
      const token = await session.token();
      if (token === null) return;
      const response = await fetch('/api/events', { headers: { authorization: `Bearer ${token}` } });
      if (response.status === 401) {
        await session.token(true);
        continue;
      }
      if (!response.ok || response.body === null) throw new Error(`events: ${response.status}`);
      delay = 1000;
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
            const change = { type, data: JSON.parse(data) } as LiveChange;
            for (const listener of [...listeners]) listener(change);
          }
        }
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
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
