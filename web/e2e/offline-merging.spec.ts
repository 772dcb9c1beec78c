import type { Browser, BrowserContext, Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, logIn, signUp, test } from './fixtures';

// Issues 40 and 39 (merging): one person, two devices, one note; the phone loses its network and
// keeps writing. On reconnection its autosave asks the server to merge (?merge=true): edits on
// other lines are saved together without a question; edits of the same lines answer 409
// merge_conflict and the conflict panel shows the merged text first, with both texts kept.
const contexts: BrowserContext[] = [];
async function device(browser: Browser, width: number): Promise<{ page: Page; context: BrowserContext }> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  contexts.push(context);
  return { page: await context.newPage(), context };
}
test.afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

const noteState = (page: Page) => page.locator('.toolbar .state');
const conflictPanel = (page: Page) =>
  page.getByRole('alert').filter({ hasText: 'This note changed since you opened it' });

/** The same account on a laptop and a phone (`phoneWidth` wide), both with the note open, autosave on. */
async function twoDevices(browser: Browser, content: string, phoneWidth: number) {
  const laptop = await device(browser, 1280);
  const phone = await device(browser, phoneWidth);
  const username = await signUp(laptop.page, undefined, undefined, { autosave: true });
  const id = await createNote(laptop.page, 'Shopping', content);
  await logIn(phone.page, username, undefined, { autosave: true });
  await phone.page.goto(`/notes/${id}`);
  await expectContent(phone.page, content);
  return { laptop: laptop.page, phone: phone.page, phoneContext: phone.context, id };
}

/** The phone goes offline and writes `text`, which stays kept on the device. */
async function writeOffline(phone: Page, context: BrowserContext, text: string): Promise<void> {
  await context.setOffline(true);
  await expect.poll(() => phone.evaluate(() => navigator.onLine)).toBe(false);
  await contentBox(phone).fill(text);
  await expect(noteState(phone)).toHaveText('Offline — kept on this device');
}

for (const width of [375, 1280]) {
  test(`at ${width} px: the same lines edited offline and on another device — merged text first, both kept, both saved`, async ({
    browser,
  }) => {
    const { laptop, phone, phoneContext, id } = await twoDevices(browser, 'bread\nmilk\neggs\n', width);
    await writeOffline(phone, phoneContext, 'bread\nmilk, oat please\neggs\n');
    // Meanwhile the laptop, online, changes the same line; its autosave saves it.
    await contentBox(laptop).fill('bread\nmilk, two litres\neggs\n');
    await expect(noteState(laptop)).toHaveText('Saved as version 2');

    // Back online: the phone's autosave asks for the merge, and the server answers where they overlap.
    const merging = phone.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().includes(`/api/notes/${id}/versions?merge=true`),
    );
    await phoneContext.setOffline(false);
    const answer = await merging;
    expect(answer.status()).toBe(409);
    expect(((await answer.json()) as { code: string }).code).toBe('merge_conflict');

    const panel = conflictPanel(phone);
    await expect(panel).toContainText('Version 2 was saved elsewhere. Nothing was overwritten.');
    // The merged text comes first, both lines in it; no button drops the laptop's words.
    await expect(panel.getByRole('button').first()).toHaveText('Save merged text');
    await expect(panel.getByRole('radio', { name: 'Keep both' })).toBeChecked();
    await expect(panel.getByRole('textbox', { name: 'Merged text' })).toHaveValue(
      'bread\nmilk, two litres\nmilk, oat please\neggs\n',
    );
    await expect(panel.getByRole('button', { name: 'Keep mine' })).toHaveCount(0);
    // Nothing saved over the laptop's version while the person has not chosen.
    await expect(noteState(phone)).not.toHaveText(/Saved as version 3/);
    if (width === 375) {
      expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await expectAccessible(phone, 'merge conflict after offline, at 375 px');
    }

    await panel.getByRole('button', { name: 'Save merged text' }).click();
    await expect(phone.getByRole('status').filter({ hasText: 'Saved as version 3' })).toBeVisible();
    await expect(panel).toHaveCount(0);
    await expectContent(phone, 'bread\nmilk, two litres\nmilk, oat please\neggs\n');
    // Both people's words on the server, as the laptop sees them.
    await laptop.reload();
    await expectContent(laptop, 'bread\nmilk, two litres\nmilk, oat please\neggs\n');
  });
}

test('an offline edit of other lines is merged on reconnection without a question', async ({ browser }) => {
  const { laptop, phone, phoneContext, id } = await twoDevices(browser, 'bread\nmilk\neggs\n', 375);
  await writeOffline(phone, phoneContext, 'bread\nmilk\neggs\napples\n');
  await contentBox(laptop).fill('butter\nbread\nmilk\neggs\n');
  await expect(noteState(laptop)).toHaveText('Saved as version 2');

  const merging = phone.waitForResponse(
    (r) => r.request().method() === 'POST' && r.url().includes(`/api/notes/${id}/versions?merge=true`),
  );
  await phoneContext.setOffline(false);
  expect((await merging).status()).toBe(201);
  await expect(
    phone
      .getByRole('status')
      .filter({ hasText: 'Saved as version 3, together with changes saved elsewhere meanwhile' }),
  ).toBeVisible();
  await expect(conflictPanel(phone)).toHaveCount(0);
  await expectContent(phone, 'butter\nbread\nmilk\neggs\napples\n');
  await laptop.reload();
  await expectContent(laptop, 'butter\nbread\nmilk\neggs\napples\n');
});
