import type { Route } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, leaveEditor, signUp, test } from './fixtures';

// The CodeMirror chunk (web/src/notes/codemirror.ts, loaded on demand).
const CODEMIRROR_CHUNK = /\/assets\/codemirror-[\w-]+\.js$/;

test('CodeMirror edits Markdown, saves with Ctrl+S from inside once, and Escape then Tab leaves it', async ({
  page,
}) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  await signUp(page);
  await page.getByRole('button', { name: 'New note' }).click();
  await page.getByLabel('Title').fill('Keyboard note');
  await page.keyboard.press('Tab');
  const content = contentBox(page);
  await expect(content).toBeFocused();
  await expect(page.locator('.cm-editor')).toBeVisible();

  await page.keyboard.type('# Plan');
  await page.keyboard.press('Enter');
  await page.keyboard.type('- one');
  await page.keyboard.press('Enter');
  await page.keyboard.type('two');
  // Enter inside a list continued it: the Markdown keymap is on.
  await expectContent(page, '# Plan\n- one\n- two');
  await expect(page.getByText('Unsaved changes')).toBeVisible();
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 1')).toBeVisible();
  await expect(content).toBeFocused();

  // Tab indents (keyboard-traps.spec.ts); Escape, then Shift+Tab goes back to the title, Tab
  // returns, Escape and Tab leave, and no tab was typed.
  await leaveEditor(page, 'Shift+Tab');
  await expect(page.getByLabel('Title')).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(content).toBeFocused();
  await leaveEditor(page, 'Tab');
  await expect(content).not.toBeFocused();
  await expectContent(page, '# Plan\n- one\n- two');
  expect(violations).toEqual([]);
  await expectAccessible(page, 'editor');

  // One keystroke, one save: the window's shortcut does not save a second time.
  await page.getByRole('button', { name: 'History' }).click();
  const versions = page
    .getByRole('navigation', { name: 'Versions, newest first' })
    .getByRole('button', { name: /^Version \d+$/ });
  await expect(versions).toHaveText(['Version 1']);
});

test('text typed before the editor has loaded is kept, with the focus', async ({ page }) => {
  await signUp(page);
  const id = await createNote(page, 'Early', 'saved text');
  let release!: () => void;
  const loaded = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route(CODEMIRROR_CHUNK, async (route: Route) => {
    await loaded;
    await route.continue();
  });
  await page.goto(`/notes/${id}`);

  const plain = page.locator('textarea').and(contentBox(page));
  await expect(plain).toHaveValue('saved text');
  await expect(page.locator('.cm-editor')).toHaveCount(0);
  await plain.focus();
  await page.keyboard.press('End');
  await page.keyboard.type(' and typed early');
  await expect(page.getByText('Unsaved changes')).toBeVisible();

  release();
  await expectContent(page, 'saved text and typed early');
  await expect(plain).toHaveCount(0);
  await expect(contentBox(page)).toBeFocused();
  await page.keyboard.type(', then more');
  await expectContent(page, 'saved text and typed early, then more');
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 2')).toBeVisible();
});

test('when the editor cannot load, the plain box still edits and saves', async ({ page }) => {
  await signUp(page);
  const id = await createNote(page, 'Offline', 'first');
  await page.route(CODEMIRROR_CHUNK, (route) => route.abort());
  await page.goto(`/notes/${id}`);
  await expect(page.getByText('The Markdown editor could not load; this plain text box works the same.')).toBeVisible();
  const plain = page.locator('textarea').and(contentBox(page));
  await plain.fill('second');
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 2')).toBeVisible();
});

test('unsaved text is guarded in the app and when the tab closes', async ({ page }) => {
  await signUp(page);
  await createNote(page, 'Guarded', 'kept');
  await contentBox(page).click();
  await page.keyboard.press('End');
  await page.keyboard.type(' unsaved');
  await expect(page.getByText('Unsaved changes')).toBeVisible();

  const confirm = page.waitForEvent('dialog');
  const leaving = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
  const asked = await confirm;
  expect(asked.message()).toBe('This note has unsaved changes. Leave without saving?');
  await asked.dismiss();
  await leaving;
  await expect(page).toHaveURL(/\/notes\//);
  await expectContent(page, 'kept unsaved');

  const beforeUnload = page.waitForEvent('dialog');
  await page.close({ runBeforeUnload: true });
  const warned = await beforeUnload;
  expect(warned.type()).toBe('beforeunload');
  await warned.dismiss();
  expect(page.isClosed()).toBe(false);
  await expect(page.getByText('Unsaved changes')).toBeVisible();

  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 2')).toBeVisible();
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
  await expect(page.getByRole('heading', { name: 'Trash' })).toBeVisible();
  expect(dialogs).toEqual([]);
});

for (const scheme of ['light', 'dark'] as const) {
  test(`the editor follows the ${scheme} colour scheme`, async ({ browser }) => {
    const context = await browser.newContext({ colorScheme: scheme });
    const page = await context.newPage();
    await signUp(page);
    await createNote(page, `In ${scheme}`, '# Title\n\nSome *words* and a [link](https://example.com).');
    await expectContent(page, '# Title\n\nSome *words* and a [link](https://example.com).');
    const colours = await page.locator('.cm-editor').evaluate((el) => {
      const style = getComputedStyle(el);
      return { background: style.backgroundColor, text: style.color };
    });
    // styles.css: --panel and --fg of each scheme.
    expect(colours).toEqual(
      scheme === 'dark'
        ? { background: 'rgb(29, 32, 38)', text: 'rgb(231, 229, 223)' }
        : { background: 'rgb(255, 255, 255)', text: 'rgb(29, 31, 35)' },
    );
    await expectAccessible(page, `editor, ${scheme}`);
    await context.close();
  });
}
