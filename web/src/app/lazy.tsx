import type { ComponentType, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Lazy<P> {
  (props: P): JSX.Element;
  /** Fetches the code now (a click that will show it, an idle moment); the same fetch is reused. */
  preload(): Promise<ComponentType<P>>;
}

/**
 * A component whose code is a chunk of its own, fetched the first time it shows (or when `preload`
 * is called): what the first screen does not show stays off the bytes it waits for. Once loaded it
 * renders at once, every time. Until then "Loading…"; when the chunk cannot be fetched (offline
 * before the app was installed, a deploy that replaced it) the person is told and can try again.
 */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): Lazy<P> {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  const preload = () => {
    loading ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        loading = null;
        throw error;
      },
    );
    return loading;
  };

  function LazyComponent(props: P) {
    const [state, setState] = useState<'loading' | 'ready' | 'failed'>(loaded ? 'ready' : 'loading');
    useEffect(() => {
      if (state !== 'loading') return;
      let live = true;
      preload().then(
        () => live && setState('ready'),
        () => live && setState('failed'),
      );
      return () => {
        live = false;
      };
    }, [state]);
    if (loaded !== null) {
      const Loaded = loaded;
      return <Loaded {...props} />;
    }
    if (state === 'failed')
      return (
        <p class="error" role="alert">
          This part of Vellum could not be loaded; check the connection.{' '}
          <button type="button" class="secondary" onClick={() => setState('loading')}>
            Try again
          </button>
        </p>
      );
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  }
  return Object.assign(LazyComponent, { preload });
}
