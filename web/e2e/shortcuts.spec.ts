import { contentBox, expect, expectAccessible, signUp, test } from './fixtures';

test('keyboard shortcuts: "?" lists them, N makes a note, / searches, P previews; single keys can be turned off', async ({
  page,
}) => {
  await signUp(page);
  await expect(page.getByText('Press ? for keyboard shortcuts.')).toBeVisible();

  await page.keyboard.press('?');
  const list = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(list).toBeVisible();
  await expect(list.getByRole('term')).toHaveText(['N', '/', 'E', 'P', 'Ctrl+S or ⌘S', 'Ctrl+K or ⌘K', '?']);
  await expectAccessible(page, 'shortcuts list');
  await page.keyboard.press('Escape');
  await expect(list).toBeHidden();

  // N: a new note, its title focused and selected, so typing names it.
  await page.keyboard.press('n');
  const title = page.getByLabel('Title');
  await expect(title).toBeFocused();
  await page.keyboard.type('Made from the keyboard');
  await expect(title).toHaveValue('Made from the keyboard');
  // In the text (CodeMirror, inside a shadow root) the keys are text too.
  await contentBox(page).click();
  await page.keyboard.type('pen, paper/ink? no');
  await expect(contentBox(page).locator('.cm-line')).toHaveText(['pen, paper/ink? no']);
  await expect(list).toBeHidden();
  await page.keyboard.press('Control+s');
  await expect(page.getByRole('status').filter({ hasText: 'Saved as version 1' })).toBeVisible();

  await page.getByRole('button', { name: 'History' }).focus();
  const preview = page.getByRole('button', { name: 'Preview' });
  await expect(preview).toHaveAttribute('aria-pressed', 'false');
  await page.keyboard.press('p');
  await expect(preview).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByRole('region', { name: 'Preview' })).toBeVisible();
  await page.keyboard.press('/');
  await expect(page.getByRole('searchbox', { name: 'Search notes' })).toBeFocused();

  // Turned off in the list, N does nothing (the choice is kept on this device).
  await page.getByRole('button', { name: 'History' }).focus();
  await page.keyboard.press('?');
  await list.getByRole('checkbox', { name: 'Single-key shortcuts (N, /, E, P)' }).uncheck();
  await list.getByRole('button', { name: 'Close' }).click();
  await expect(list).toBeHidden();
  const notes = page.getByRole('list', { name: 'Notes, pinned first, then most recent' }).getByRole('listitem');
  await expect(notes).toHaveCount(1);
  await page.getByRole('button', { name: 'History' }).focus();
  await page.keyboard.press('n');
  await page.keyboard.press('p');
  await expect(preview).toHaveAttribute('aria-pressed', 'true');
  await page.reload();
  await expect(page.getByLabel('Title')).toHaveValue('Made from the keyboard');
  await page.keyboard.press('?');
  await expect(list.getByRole('checkbox', { name: 'Single-key shortcuts (N, /, E, P)' })).not.toBeChecked();
  await page.keyboard.press('Escape');
  await expect(notes).toHaveCount(1);
});
