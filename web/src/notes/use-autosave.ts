import { useEffect, useRef } from 'preact/hooks';
import { AUTOSAVE_IDLE_MS, autosave } from '../app/device-settings';
import { useConnection } from '../offline/connection';

/**
 * Saved by itself once the typing pauses (unless turned off on this device), when `armed`; the
 * timer starts again with every change of `typing` (the title and the count of edits) and of
 * `note` (which re-arms it after a save, for what was typed while that save ran).
 */
export function useAutosave(save: () => void, armed: boolean, typing: unknown[], note: unknown): void {
  const latest = useRef(save);
  latest.current = save;
  // The connection came back (offline/connection.ts): what is unsaved is saved, without a key.
  const { wakes } = useConnection();
  const woken = useRef(wakes);
  useEffect(() => {
    // Back online: at once (the typing paused long ago); else once the typing pauses.
    const delay = woken.current === wakes ? AUTOSAVE_IDLE_MS : 0;
    woken.current = wakes;
    if (!armed || !autosave.on()) return;
    const timer = setTimeout(() => latest.current(), delay);
    return () => clearTimeout(timer);
  }, [...typing, armed, note, wakes]);
}

/**
 * Ctrl/Cmd+S outside the text (the title, a button); inside it the editor's own keymap saves and
 * marks the event handled, so it is not saved twice.
 */
export function useSaveShortcut(save: () => void): void {
  const latest = useRef(save);
  latest.current = save;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented) return;
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 's') {
        event.preventDefault();
        latest.current();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
