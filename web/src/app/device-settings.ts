/**
 * How the editor behaves on this device, chosen in Account ("Editing") and kept in local storage:
 * they are about this device's screen and keyboard, and need no API.
 */
interface DeviceSetting {
  on(): boolean;
  set(on: boolean): void;
}

function setting(key: string, byDefault: boolean): DeviceSetting {
  let choice = byDefault;
  try {
    const kept = localStorage.getItem(key);
    if (kept !== null) choice = kept === 'on';
  } catch {
    /* storage refused (private mode): the default, for this page */
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
export const autosave = setting('vellum.autosave', true);
/** Idle time after the last change before the automatic save. */
export const AUTOSAVE_IDLE_MS = 2000;

/**
 * A note with text opens rendered, for reading; Edit (or E) turns it into the editor. Off by
 * default: opening a note shows its Title and Content fields, which the contract names and its
 * clients and tests rely on; E switches to reading at any time.
 */
export const openForReading = setting('vellum.reading', false);

/**
 * Editing a note live with whoever else has it open (CONTRACT "Many hands and devices"): one shared
 * text over /api/collab, the others' cursors shown, versions made by the server when the typing
 * pauses. Off, the editor saves as before (with merging). On by default.
 */
export const liveEditing = setting('vellum.live', true);
