import { contentBox, expect, expectAccessible, expectContent, leaveEditor, signUp, test } from './fixtures';

// Issue #42, items 3 and 4: Tab indents in the text (Escape, then Tab, leaves it), and Enter in the
// title moves on to the text instead of running the title on.

for (const width of [375, 1280]) {
  test(`at ${width} px: Tab indents a list item and the next letters stay text; Escape then Tab leaves the editor; single keys never fire in a field`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    await page.getByRole('button', { name: 'New note' }).click();
    await expect(page.getByLabel('Title')).toBeFocused();
    // A single key in a field is text: "n" here does not open another new note.
    await page.keyboard.type('nested');
    await expect(page.getByLabel('Title')).toHaveValue('nested');
    await expectContent(page, ''); // CodeMirror is loaded
    await contentBox(page).click();
    await page.keyboard.type('- milk');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.type('nested pepper');
    await expectContent(page, '- milk\n  - nested pepper');
    await expect(contentBox(page)).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expectContent(page, '- milk\n- nested pepper');
    // No shortcut fired while typing: still this one unsaved note, in the editing mode.
    await expect(page).toHaveURL(/\/notes\/new/);
    await expect(page.getByRole('button', { name: 'Preview' })).toHaveAttribute('aria-pressed', 'false');

    // The documented way out for the keyboard: Escape, then Tab.
    await leaveEditor(page, 'Tab');
    await expect(contentBox(page)).not.toBeFocused();
    await expectContent(page, '- milk\n- nested pepper');
    await expectAccessible(page, `editor after leaving it with Escape, Tab at ${width} px`);
  });

  test(`at ${width} px: Enter in the title moves to the start of the text; the words after the cursor go with it`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    await page.getByRole('button', { name: 'New note' }).click();
    const title = page.getByLabel('Title');
    await expect(title).toBeFocused();
    await expectContent(page, '');
    await page.keyboard.type('Call mom about Sunday');
    await page.keyboard.press('Enter');
    await page.keyboard.type('and bring the cake');
    await expect(title).toHaveValue('Call mom about Sunday');
    await expectContent(page, 'and bring the cake');
    await expect(contentBox(page)).toBeFocused();
    // Enter did not save: the note is still new.
    await expect(page).toHaveURL(/\/notes\/new/);

    // Enter in the middle of the title: the rest becomes the text's first line, the cursor before it.
    await title.fill('Groceries milk and eggs');
    await title.press('Home');
    for (let i = 0; i < 'Groceries'.length; i++) await title.press('ArrowRight');
    await title.press('Enter');
    await expect(title).toHaveValue('Groceries');
    await expectContent(page, 'milk and eggs\nand bring the cake');
    await page.keyboard.type('Buy: ');
    await expectContent(page, 'Buy: milk and eggs\nand bring the cake');
  });
}
