import { useEffect, useRef } from 'preact/hooks';
import { setNavigationGuard } from '../app/router';

/**
 * Leaving with unsaved text asks first, in the app and when closing or reloading the tab.
 * `onLeave` runs when the user chose, in the app, to leave without saving. `dirty` may be a ref
 * read at the moment of leaving (live editing: typed and not yet acknowledged, which changes
 * twice a keystroke and is not rendered each time).
 */
export function useLeaveGuard(dirty: boolean | { readonly current: boolean }, onLeave: () => void): void {
  const latest = useRef(dirty);
  latest.current = dirty;
  const armed = typeof dirty === 'boolean' ? dirty : true;
  useEffect(() => {
    if (!armed) return;
    const isDirty = () => {
      const now = latest.current;
      return typeof now === 'boolean' ? now : now.current;
    };
    const warn = (event: BeforeUnloadEvent) => {
      if (isDirty()) event.preventDefault();
    };
    window.addEventListener('beforeunload', warn);
    setNavigationGuard(() => {
      if (!isDirty()) return true;
      const leave = window.confirm('This note has unsaved changes. Leave without saving?');
      if (leave) onLeave();
      return leave;
    });
    return () => {
      window.removeEventListener('beforeunload', warn);
      setNavigationGuard(null);
    };
  }, [armed]);
}

/** Nothing left to guard (the note was deleted): leaving asks nothing. */
export function dropLeaveGuard(): void {
  setNavigationGuard(null);
}
