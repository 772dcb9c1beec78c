import type { Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, signUp, test } from './fixtures';

/** 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const LINK = /\/api\/attachments\/[0-9a-f-]{36}/;

/** Pastes files into the note's text as a browser does (a clipboard event carrying them). */
async function paste(
  page: Page,
  files: Array<{ name: string; type: string; base64?: string; size?: number }>,
): Promise<void> {
  await contentBox(page).evaluate((element, list) => {
    const data = new DataTransfer();
    for (const f of list) {
      const bytes =
        f.base64 !== undefined ? Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0)) : new Uint8Array(f.size ?? 0);
      data.items.add(new File([bytes], f.name, { type: f.type }));
    }
    element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, files);
}

test('paste an image: uploaded, linked at the cursor, shown in the preview and after a reload without a token in any URL', async ({
  page,
}) => {
  await signUp(page);
  await createNote(page, 'With a picture', 'Before the picture.\n');
  await expectContent(page, 'Before the picture.\n'); // CodeMirror, which the paste below is for
  await contentBox(page).press('Control+End');
  await paste(page, [{ name: 'dot.png', type: 'image/png', base64: PNG }]);
  await expect(contentBox(page)).toContainText(/!\[dot\.png\]\(\/api\/attachments\/[0-9a-f-]{36}\)/);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: /Saved as version 2/ })).toBeVisible();

  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.reload();
  await page.getByRole('button', { name: 'Preview' }).click();
  const image = page.getByRole('region', { name: 'Preview' }).getByRole('img', { name: 'dot.png' });
  await expect(image).toHaveAttribute('src', /^blob:/);
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);
  for (const url of requests) expect(url).not.toMatch(/token|authorization/i);
  await expectAccessible(page, 'note with an image');
});

test('attach a PDF with the button; an oversized file says why and leaves the text alone; the account lists and deletes files', async ({
  page,
}) => {
  await signUp(page);
  await createNote(page, 'Files', 'Some text.');
  await page
    .locator('input[type=file]')
    .setInputFiles({ name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%%EOF\n') });
  await expect(contentBox(page)).toContainText(/\[report\.pdf\]\(\/api\/attachments\/[0-9a-f-]{36}\)/);
  const before = await contentBox(page).textContent();
  await paste(page, [{ name: 'huge.bin', type: 'application/octet-stream', size: 26 * 1024 * 1024 }]);
  await expect(page.getByRole('alert')).toHaveText(
    'Could not attach “huge.bin”: The file is larger than the 25 MiB limit for one file',
  );
  expect(await contentBox(page).textContent()).toBe(before);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: /Saved as version 2/ })).toBeVisible();

  // A file attached and then left out of the text is used nowhere: it can go.
  await paste(page, [{ name: 'scratch.txt', type: 'text/plain', base64: btoa('scratch') }]);
  await expect(contentBox(page)).toContainText('scratch.txt');
  const text = (await contentBox(page).textContent())!;
  expect(text).toMatch(LINK);

  // Leaving without saving (the question is answered yes): the link was never saved anywhere.
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('link', { name: 'Account' }).click();
  page.once('dialog', (dialog) => void dialog.accept());
  const section = page.getByRole('region', { name: 'Attachments' });
  const rows = section.getByRole('list', { name: 'Your files' }).getByRole('listitem');
  await expect(rows).toHaveCount(2);
  await expect(rows.filter({ hasText: 'report.pdf' })).toContainText('used in 1 version');
  await expect(rows.filter({ hasText: 'scratch.txt' })).toContainText('not used in any note');
  await section.getByRole('button', { name: 'Delete report.pdf' }).click();
  await expect(section.getByRole('alert')).toContainText('A version of a note links to this attachment');
  page.once('dialog', (dialog) => void dialog.accept());
  await section.getByRole('button', { name: 'Delete scratch.txt' }).click();
  await expect(section.getByRole('status')).toHaveText('“scratch.txt” deleted.');
  await expect(rows).toHaveCount(1);
  await expect(section).toContainText(/used of 1\.0 GiB/);
  await expectAccessible(page, 'attachments in the account');
});
