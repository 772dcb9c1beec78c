import { contentBox, createNote, expect, expectContent, signUp, test } from './fixtures';

// The page's clock is driven by the test (page.clock): "two seconds of quiet" is exact, not a sleep.
test('a note saves by itself two seconds after the typing stops; turned off in Account, only Save saves', async ({
  page,
}) => {
  await page.clock.install();
  await signUp(page, undefined, undefined, { autosave: true });
  await createNote(page, 'Auto', 'first');
  const state = page.getByRole('status').filter({ hasText: /Unsaved changes|Saved as version|Version \d/ });

  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' and more');
  await expect(state).toHaveText('Unsaved changes');
  await page.clock.runFor(1500);
  await page.keyboard.type('!');
  // 1.5 s after the first burst and 1.5 s after the last key: not yet (the pause starts again at each key).
  await page.clock.runFor(1500);
  await expect(state).toHaveText('Unsaved changes');
  await page.clock.runFor(600);
  await expect(state).toHaveText('Saved as version 2');
  await page.getByRole('button', { name: 'History' }).click();
  await expect(
    page.getByRole('navigation', { name: 'Versions, newest first' }).getByRole('button', { name: /^Version \d+$/ }),
  ).toHaveCount(2);
  await page.goBack();
  await expectContent(page, 'first and more!');

  // Off on this device: nothing is saved however long the pause, until Save.
  await page.getByRole('link', { name: 'Account' }).click();
  const setting = page.getByRole('checkbox', { name: 'Save automatically a moment after I stop typing' });
  await expect(setting).toBeChecked();
  await setting.uncheck();
  await page.goBack();
  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' by hand');
  await page.clock.runFor(10_000);
  await expect(state).toHaveText('Unsaved changes');
  await page.keyboard.press('Control+s');
  await expect(state).toHaveText('Saved as version 3');
  await page.reload();
  await page.getByRole('link', { name: 'Account' }).click();
  await expect(setting).not.toBeChecked();
});

// Issue 39, defect 2: Cancel on "Leave without saving?" in a new note, after its first autosave,
// used to remount the editor (a false "Unsaved text … was restored", the cursor lost, autosave off).
test('a new note saved by itself stays as it is when leaving it is cancelled: same text, cursor and autosave', async ({
  page,
}) => {
  await page.clock.install();
  await signUp(page, undefined, undefined, { autosave: true });
  await page.getByRole('button', { name: 'New note' }).click();
  await page.getByLabel('Title').fill('Fresh');
  await contentBox(page).click();
  await page.keyboard.type('first line');
  await page.clock.runFor(2100);
  const state = page.getByRole('status').filter({ hasText: /Unsaved changes|Saved as version|Version \d/ });
  await expect(state).toHaveText('Saved as version 1');
  await expect(page).toHaveURL(/\/notes\/[0-9a-f-]{36}$/);

  await page.keyboard.type(' and more');
  await expect(state).toHaveText('Unsaved changes');
  page.once('dialog', (dialog) => {
    expect(dialog.message()).toBe('This note has unsaved changes. Leave without saving?');
    void dialog.dismiss();
  });
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page).toHaveURL(/\/notes\/[0-9a-f-]{36}$/);
  await expect(page.getByText(/was restored/)).toHaveCount(0);
  // The cursor is where it was: back in the text (focus, not a click, which would move it), typing
  // goes on at the end of the line.
  await contentBox(page).focus();
  await page.keyboard.type('!');
  await expectContent(page, 'first line and more!');
  await expect(page.getByText(/was restored/)).toHaveCount(0);
  await page.clock.runFor(2100);
  await expect(state).toHaveText('Saved as version 2');
});
