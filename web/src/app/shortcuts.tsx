import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Keyboard shortcuts. A control that has one says so with `aria-keyshortcuts` (which screen readers
 * announce), and this finds it there: pressing the key clicks that button, or focuses that field,
 * if it is on screen. Single keys act only while the focus is not in something that takes text, and
 * can be turned off ("?" and the list say how): speech input and stray keys must not trigger them
 * (WCAG 2.1.4). Ctrl/⌘+S (Save) is the editor's own and always on.
 */
const SHORTCUTS: ReadonlyArray<{ keys: string; label: string; what: string }> = [
  { keys: 'N', label: 'N', what: 'New note' },
  { keys: '/', label: '/', what: 'Search notes' },
  { keys: 'E', label: 'E', what: 'Edit or read the note (in a note)' },
  { keys: 'P', label: 'P', what: 'Preview beside the text on or off (while editing)' },
  { keys: 'Control+S', label: 'Ctrl+S or ⌘S', what: 'Save the note (also while typing)' },
  { keys: 'Control+K', label: 'Ctrl+K or ⌘K', what: 'Go to a note (also while typing)' },
  { keys: '?', label: '?', what: 'This list' },
];

const STORAGE_KEY = 'vellum.singleKeyShortcuts';
/** The choice on this device (local storage), or for this page where storage is refused. */
let enabled: boolean = (() => {
  try {
    return localStorage.getItem(STORAGE_KEY) !== 'off';
  } catch {
    return true;
  }
})();

/**
 * Where typing goes: a single key there is text, not a command. CodeMirror's surface counts even
 * where it is not contenteditable (on Chrome it takes text through the EditContext API).
 */
function takesText(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (
    target.isContentEditable ||
    target.closest('.cm-editor, [role="textbox"], [role="searchbox"], [role="combobox"]') !== null
  )
    return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement)
    return !['button', 'checkbox', 'radio', 'submit', 'reset', 'file', 'color', 'range'].includes(target.type);
  return false;
}

/** The visible control that declares `key` among its aria-keyshortcuts. */
function controlFor(key: string): HTMLElement | undefined {
  for (const element of document.querySelectorAll<HTMLElement>('[aria-keyshortcuts]')) {
    const keys = (element.getAttribute('aria-keyshortcuts') ?? '').split(/\s+/);
    if (keys.some((k) => k.toLowerCase() === key.toLowerCase()) && element.getClientRects().length > 0) return element;
  }
  return undefined;
}

export function Shortcuts() {
  const dialog = useRef<HTMLDialogElement>(null);
  const [on, setOn] = useState(enabled);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
      // The first element of the path: inside a shadow root (the editor's), event.target is its host.
      if (dialog.current?.open || takesText(event.composedPath()[0] ?? null)) return;
      if (event.key === '?') {
        event.preventDefault();
        dialog.current?.showModal();
        return;
      }
      if (!enabled) return;
      const control = controlFor(event.key === '/' ? '/' : event.key.toUpperCase());
      if (control === undefined) return;
      event.preventDefault();
      if (control instanceof HTMLInputElement) control.focus();
      else control.click();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const toggle = (next: boolean) => {
    enabled = next;
    try {
      localStorage.setItem(STORAGE_KEY, next ? 'on' : 'off');
    } catch {
      /* private mode: the choice lasts for this page */
    }
    setOn(next);
  };

  return (
    <dialog ref={dialog} class="shortcuts" aria-labelledby="shortcuts-title">
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map((s) => (
          <div key={s.keys}>
            <dt>
              <kbd>{s.label}</kbd>
            </dt>
            <dd>{s.what}</dd>
          </div>
        ))}
      </dl>
      <p class="muted">Single keys work when you are not typing in a field. “?” always opens this list.</p>
      <label class="check">
        <input type="checkbox" checked={on} onChange={(e) => toggle(e.currentTarget.checked)} /> Single-key shortcuts
        (N, /, E, P)
      </label>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
