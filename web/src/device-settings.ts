/**
 * Saving by itself: a moment after the typing stops, the editor saves a version as the Save button
 * would (conditional on the version it started from, so a save made elsewhere meets the conflict
 * panel). On by default; turned off per device in Account ("Editing"), kept in local storage.
 */
const KEY = 'vellum.autosave';
/** Idle time after the last change before the save. */
export const AUTOSAVE_IDLE_MS = 2000;

let choice: boolean = (() => {
  try {
    return localStorage.getItem(KEY) !== 'off';
  } catch {
    return true;
  }
})();

export function autosaveOn(): boolean {
  return choice;
}

export function setAutosave(on: boolean): void {
  choice = on;
  try {
    localStorage.setItem(KEY, on ? 'on' : 'off');
  } catch {
    /* private mode: the choice lasts for this page */
  }
}
