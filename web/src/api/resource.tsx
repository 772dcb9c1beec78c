import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from './client';

/**
 * What a screen shows of data it fetched: still loading (with what it had before, when reloading),
 * there, or failed with a message to show. Never `null` meaning both "loading" and "failed".
 */
export type Resource<T> =
  | { state: 'loading'; data: T | undefined }
  | { state: 'ready'; data: T }
  | { state: 'failed'; data: T | undefined; error: string };

/**
 * Fetches with `load` when the component appears and whenever `deps` change. A new fetch (or
 * leaving) aborts the one before through its signal, so an older answer never lands after a newer
 * one. `reload()` fetches again, keeping the data on screen meanwhile.
 */
export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
): Resource<T> & { reload: () => Promise<void> } {
  const [resource, setResource] = useState<Resource<T>>({ state: 'loading', data: undefined });
  const current = useRef<AbortController | null>(null);
  const loader = useRef(load);
  loader.current = load;
  const run = useCallback(async () => {
    current.current?.abort();
    const controller = new AbortController();
    current.current = controller;
    setResource((before) => ({ state: 'loading', data: before.data }));
    try {
      const data = await loader.current(controller.signal);
      if (!controller.signal.aborted) setResource({ state: 'ready', data });
    } catch (e) {
      if (!controller.signal.aborted)
        setResource((before) => ({ state: 'failed', data: before.data, error: errorMessage(e) }));
    }
  }, []);
  useEffect(() => {
    void run();
    return () => current.current?.abort();
  }, deps);
  return { ...resource, reload: run };
}

/**
 * Shows a resource: its children with the data once there; "Loading…" until then; on failure the
 * message and Try again (the data fetched before, if any, stays below it).
 */
export function Loaded<T>({
  resource,
  children,
  what = 'this',
}: {
  resource: Resource<T> & { reload: () => Promise<void> };
  children: (data: T) => ComponentChildren;
  what?: string;
}) {
  return (
    <>
      {resource.state === 'failed' && (
        <div class="error" role="alert">
          <p>
            Could not load {what}: {resource.error}
          </p>
          <button type="button" class="secondary" onClick={() => void resource.reload()}>
            Try again
          </button>
        </div>
      )}
      {resource.data !== undefined
        ? children(resource.data)
        : resource.state === 'loading' && (
            <p class="muted" role="status">
              Loading…
            </p>
          )}
    </>
  );
}
