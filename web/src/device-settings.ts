/**
 * How the editor behaves on this device, chosen in Account ("Editing") and kept in local storage:
 * they are about this device's screen and keyboard, and need no API.
 */
interface DeviceSetting {
  on(): boolean;
  set(on: boolean): void;
}

function setting(key: string): DeviceSetting {
  let choice = true;
  try {
    choice = localStorage.getItem(key) !== 'off';
  } catch {
    /* storage refused (private mode): on, for this page */
  }
  return {
    on: () => choice,
    set(on) {
      choice = on;
      try {
        localStorage.setItem(key, on ? 'on' : 'off');
      } catch {
        /* the choice lasts for this page */
      }
    },
  };
}

/**
 * Saving by itself a moment after the typing stops, as the Save button would (conditional on the
 * version it started from, so a save made elsewhere meets the conflict panel). On by default.
 */
export const autosave = setting('vellum.autosave');
/** Idle time after the last change before the automatic save. */
export const AUTOSAVE_IDLE_MS = 2000;

/** A note with text opens rendered, for reading; Edit (or E) turns it into the editor. On by default. */
export const openForReading = setting('vellum.reading');
