import { contentBox, createNote, expect, expectAccessible, signUp, test } from './fixtures';

// Issue #42, item 9: a toolbar that fits a phone, modes that can be told apart, a header on one
// row, the text high on the screen, and an Account page of folded sections on a phone.

test('at 375 px: one-row header, a short toolbar with More, the text high up, Edit/Preview told apart from Save', async ({
  browser,
}) => {
  const context = await browser.newContext({ viewport: { width: 375, height: 812 } });
  const page = await context.newPage();
  await signUp(page);
  // The header keeps to one row: "Log out" sits beside the brand, not below it.
  const brand = page.getByRole('link', { name: 'Vellum', exact: true });
  const logOut = page.getByRole('button', { name: 'Log out', exact: true });
  const [b, l] = [(await brand.boundingBox())!, (await logOut.boundingBox())!];
  expect(Math.abs(b.y + b.height / 2 - (l.y + l.height / 2))).toBeLessThan(8);
  expect(l.x + l.width).toBeLessThanOrEqual(375);

  await createNote(page, 'On the bus', 'first line');
  const toolbar = page.getByRole('form', { name: 'Note' }).locator('.toolbar');
  for (const name of ['Save', 'Edit', 'Preview', 'More'])
    await expect(toolbar.getByRole('button', { name, exact: true })).toBeVisible();
  for (const name of ['History', 'Share', 'Delete'])
    await expect(page.getByRole('button', { name, exact: true })).toBeHidden();
  await expect(page.getByLabel('Folder', { exact: true })).toBeHidden();
  // The text starts in the top third of the screen (it was 395 px down).
  expect((await contentBox(page).boundingBox())!.y).toBeLessThan(812 / 3);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

  // Edit (pressed) does not look like Save: the modes can be told apart.
  const look = (name: string) =>
    toolbar.getByRole('button', { name, exact: true }).evaluate((el) => getComputedStyle(el).backgroundColor);
  await expect(toolbar.getByRole('button', { name: 'Edit' })).toHaveAttribute('aria-pressed', 'true');
  expect(await look('Edit')).not.toBe(await look('Save'));
  expect(await look('Edit')).not.toBe(await look('Preview'));
  await expectAccessible(page, 'note at 375 px');

  await toolbar.getByRole('button', { name: 'More' }).click();
  await expect(toolbar.getByRole('button', { name: 'More' })).toHaveAttribute('aria-expanded', 'true');
  for (const name of ['History', 'Share', 'Delete'])
    await expect(page.getByRole('button', { name, exact: true })).toBeVisible();
  await expect(page.getByLabel('Folder', { exact: true })).toBeVisible();
  await expectAccessible(page, 'More menu at 375 px');
  // VELLUM_SCREENSHOTS=1: the docs' screenshots are taken here (docs/web-client.md).
  if (process.env.VELLUM_SCREENSHOTS) await page.screenshot({ path: 'docs/screenshot-editor-375.png' });

  // The Account page: every section folded under its heading, opened one at a time.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
  const sessions = page.getByRole('button', { name: 'Sessions' });
  await expect(sessions).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByText('This device', { exact: true })).toBeHidden();
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  expect(height).toBeLessThan(812 * 2);
  await sessions.click();
  await expect(sessions).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByText('This device', { exact: true })).toBeVisible();
  await expectAccessible(page, 'account at 375 px');
  await context.close();
});

test('at 1280 px: every action in the toolbar, no More; the Account page open', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await signUp(page);
  await createNote(page, 'At the desk', 'first line');
  const toolbar = page.getByRole('form', { name: 'Note' }).locator('.toolbar');
  for (const name of ['Save', 'Edit', 'Preview', 'History', 'Share', 'Delete'])
    await expect(toolbar.getByRole('button', { name, exact: true })).toBeVisible();
  await expect(toolbar.getByRole('button', { name: 'More' })).toBeHidden();
  await expect(page.getByLabel('Folder', { exact: true })).toBeVisible();
  const look = (name: string) =>
    toolbar.getByRole('button', { name, exact: true }).evaluate((el) => getComputedStyle(el).backgroundColor);
  expect(await look('Edit')).not.toBe(await look('Save'));
  await expectAccessible(page, 'note at 1280 px');
  if (process.env.VELLUM_SCREENSHOTS) await page.screenshot({ path: 'docs/screenshot-editor-1280.png' });
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
  await expect(page.getByRole('button', { name: 'Sessions' })).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByText('This device', { exact: true })).toBeVisible();
  await expectAccessible(page, 'account at 1280 px');
});
