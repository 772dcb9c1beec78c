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
