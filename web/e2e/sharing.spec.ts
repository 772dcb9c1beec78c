import type { Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, signUp, test } from './fixtures';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Creates a link in the Share panel; the newest link is listed first. */
async function createLink(page: Page, pin: boolean, existing: number): Promise<string> {
  const panel = page.getByRole('region', { name: 'Share' });
  if (!(await panel.isVisible())) await page.getByRole('button', { name: 'Share' }).click();
  await panel.getByRole('radio', { name: pin ? /version \d+, for good/ : 'the latest version, always' }).check();
  await panel.getByRole('button', { name: 'Create link' }).click();
  await expect(panel.getByRole('status')).toHaveText('Link created and copied. Anyone with it can read this note.');
  const links = panel.getByRole('textbox', { name: 'Share link' });
  await expect(links).toHaveCount(existing + 1);
  await expect(panel.getByRole('listitem').first()).toContainText(pin ? /version \d+ ·/ : 'latest version');
  return links.first().inputValue();
}

test('share a note by link: a fresh browser without an account reads it with its image; a pinned link says it is older; revoke ends it', async ({
  page,
  browser,
}) => {
  await signUp(page);
  await createNote(page, 'Trip plan', 'Day one: the harbour.\n');
  await expectContent(page, 'Day one: the harbour.\n'); // CodeMirror, which the paste below is for
  await contentBox(page).press('Control+End');
  await contentBox(page).evaluate((element, base64) => {
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], 'map.png', { type: 'image/png' }));
    element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, PNG);
  await expect(contentBox(page)).toContainText('![map.png](/api/attachments/');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: /Saved as version 2/ })).toBeVisible();

  const live = await createLink(page, false, 0);
  expect(live).toMatch(/\/s\/[A-Za-z0-9_-]{32}$/);
  const pinned = await createLink(page, true, 1);
  await expectAccessible(page, 'share panel');

  const stranger = await browser.newContext();
  const reader = await stranger.newPage();
  const requests: string[] = [];
  reader.on('request', (request) => requests.push(request.url()));
  await reader.goto(new URL(live).pathname);
  await expect(reader.getByRole('heading', { name: 'Trip plan' })).toBeVisible();
  await expect(reader.getByText('Day one: the harbour.')).toBeVisible();
  const image = reader.getByRole('img', { name: 'map.png' });
  await expect(image).toHaveAttribute('src', /^blob:/);
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);
  await expect(reader.locator('meta[name="robots"]')).toHaveAttribute('content', 'noindex');
  await expect(reader.getByRole('button', { name: 'Log in' })).toHaveCount(0);
  for (const url of requests) expect(url).not.toMatch(/\/api\/auth\//);
  await expectAccessible(reader, 'shared page');

  // The owner saves again: the live link follows, the pinned one shows its version with a notice.
  await contentBox(page).press('Control+End');
  await contentBox(page).pressSequentially('Day two: the hills.');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: /Saved as version 3/ })).toBeVisible();
  await reader.reload();
  await expect(reader.getByText('Day two: the hills.')).toBeVisible();
  await reader.goto(new URL(pinned).pathname);
  await expect(reader.getByRole('note')).toHaveText(
    'This link shows version 2, an earlier version of this note: it has changed since.',
  );

  // Opening the panel again reads the views anew.
  await page.getByRole('button', { name: 'Share' }).click();
  await page.getByRole('button', { name: 'Share' }).click();
  const panel = page.getByRole('region', { name: 'Share' });
  await expect(panel.getByRole('listitem').filter({ hasText: 'latest version' })).toContainText('2 views');
  await panel
    .getByRole('listitem')
    .filter({ hasText: 'latest version' })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await expect(panel.getByRole('status')).toHaveText('Link revoked: it no longer works.');
  await reader.goto(new URL(live).pathname);
  await expect(reader.getByRole('alert')).toHaveText(
    'This link does not work: it may have been revoked or have expired, or the note was deleted.',
  );
  await stranger.close();
});
