import AxeBuilder from '@axe-core/playwright';
import { expect, type Locator, type Page } from '@playwright/test';

export const GOOD_PASSWORD = 'violet-Harbor-lantern-42-quietly';

let counter = 0;
export function uniqueName(prefix = 'u'): string {
  counter += 1;
  return `${prefix}${counter}${Math.random().toString(36).slice(2, 8)}`;
}

/** No serious or critical axe-core violation on the page as it is now. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `axe violations on ${screen}`).toEqual([]);
}

/**
 * The specs of saving by hand, unsaved text and conflicts run with autosave off (Account,
 * "Editing"): with it on, text stays unsaved only for the two seconds after the last key, and those
 * flows would race the automatic save. autosave.spec.ts tests the default, with the page's clock.
 * `reading: true` makes notes open for reading (Account, "Editing"; off by default), for
 * reading.spec.ts.
 */
interface DeviceChoices { autosave?: boolean; reading?: boolean }
async function chooseOnDevice(page: Page, { autosave = false, reading = false }: DeviceChoices): Promise<void> {
  // Run on every page load: a choice the spec leaves alone is not touched, so a spec can change it
  // in Account and see it kept.
  await page.addInitScript(([save, read]) => {
    if (!save) localStorage.setItem('vellum.autosave', 'off');
    if (read && localStorage.getItem('vellum.reading') === null) localStorage.setItem('vellum.reading', 'on');
  }, [autosave, reading]);
}

export async function signUp(page: Page, username = uniqueName(), password = GOOD_PASSWORD, options: DeviceChoices = {}): Promise<string> {
  await chooseOnDevice(page, options);
  await page.goto('/signup');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
  return username;
}

export async function logIn(page: Page, username: string, password = GOOD_PASSWORD, options: DeviceChoices = {}): Promise<void> {
  await chooseOnDevice(page, options);
  await page.goto('/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
}

/** The note's editing surface (CodeMirror's, or the plain box while CodeMirror loads). */
export function contentBox(page: Page): Locator {
  return page.getByRole('textbox', { name: 'Content', exact: true });
}

/** The text as CodeMirror shows it, line by line (so this also waits for CodeMirror). */
export async function expectContent(page: Page, text: string): Promise<void> {
  await expect(contentBox(page).locator('.cm-line')).toHaveText(text.split('\n'));
}

/** Creates a note through the UI (New note, then Save: the first save creates it); returns its id. */
export async function createNote(page: Page, title: string, content: string): Promise<string> {
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page).toHaveURL(/\/notes\/new(\?[^/]*)?$/);
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');
  await page.getByLabel('Title').fill(title);
  await contentBox(page).fill(content);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: /Saved as version 1/ })).toBeVisible();
  await expect(page).toHaveURL(/\/notes\/[0-9a-f-]{36}(\?[^/]*)?$/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Replaces the open note's content and saves it with Ctrl+S as version `version`. */
export async function saveContent(page: Page, content: string, version: number): Promise<void> {
  await contentBox(page).fill(content);
  await page.keyboard.press('Control+s');
  await expect(page.getByText(`Saved as version ${version}`)).toBeVisible();
}

/** Opens the open note's history; returns its version buttons, newest first. */
export async function openHistory(page: Page, id: string): Promise<Locator> {
  await page.getByRole('button', { name: 'History' }).click();
  await expect(page).toHaveURL(new RegExp(`/notes/${id}/history$`));
  return page.getByRole('navigation', { name: 'Versions, newest first' }).getByRole('button', { name: /^Version \d+$/ });
}
