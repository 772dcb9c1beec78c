import fs from 'node:fs';
import type { Download, Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, signUp, test } from './fixtures';

// Issue #42, item 5: a file linked in a note opens (downloads) from the preview, from the
// Attachments list, and for the reader of a shared link, who has no account.

const PDF = '%PDF-1.4\n% the report\n%%EOF\n';

async function bytesOf(download: Download): Promise<string> {
  return fs.readFileSync((await download.path())!, 'utf8');
}

async function clickAndDownload(page: Page, click: () => Promise<void>): Promise<Download> {
  const download = page.waitForEvent('download');
  await click();
  return download;
}

for (const width of [375, 1280]) {
  const phone = width < 720;
  test(`at ${width} px: a PDF linked in a note downloads from the preview, the Attachments list and a shared page`, async ({
    page,
    browser,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    await createNote(page, 'Quarterly', 'The report:\n');
    await contentBox(page).press('Control+End');
    // On a phone Attach, Share and the filing bar wait in the toolbar's More menu (phone.spec.ts).
    if (phone) await page.getByRole('button', { name: 'More' }).click();
    await page
      .locator('input[type=file]')
      .setInputFiles({ name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from(PDF) });
    await expect(contentBox(page)).toContainText(/\[report\.pdf\]\(\/api\/attachments\/[0-9a-f-]{36}\)/);
    await page.keyboard.press('Control+s');
    await expect(page.getByRole('status').filter({ hasText: /Saved as version 2/ })).toBeVisible();
    const noteUrl = page.url();

    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview' });
    const fromPreview = await clickAndDownload(page, () => preview.getByRole('link', { name: 'report.pdf' }).click());
    expect(fromPreview.suggestedFilename()).toBe('report.pdf');
    expect(await bytesOf(fromPreview)).toBe(PDF);
    // The app stayed on the note (it used to navigate to the bare file URL and show an empty page).
    expect(page.url()).toBe(noteUrl);
    await expectAccessible(page, `preview with a file link at ${width} px`);

    // Share it by link before leaving the note.
    const more = page.getByRole('button', { name: 'More' });
    if (phone && (await more.getAttribute('aria-expanded')) !== 'true') await more.click();
    await page.getByRole('button', { name: 'Share' }).click();
    const panel = page.getByRole('region', { name: 'Share' });
    await panel.getByRole('radio', { name: 'the latest version, always' }).check();
    await panel.getByRole('button', { name: 'Create link' }).click();
    const link = await panel.getByRole('textbox', { name: 'Share link' }).first().inputValue();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const files = page.getByRole('region', { name: 'Attachments' });
    if (phone) await files.getByRole('button', { name: 'Attachments' }).click();
    const fromList = await clickAndDownload(page, () =>
      files.getByRole('button', { name: 'Download report.pdf' }).click(),
    );
    expect(fromList.suggestedFilename()).toBe('report.pdf');
    expect(await bytesOf(fromList)).toBe(PDF);

    // A reader without an account: the link works there too, with no sign-in.
    const stranger = await browser.newContext({ viewport: { width, height: 800 } });
    const reader = await stranger.newPage();
    await reader.goto(new URL(link).pathname);
    await expect(reader.getByRole('heading', { name: 'Quarterly' })).toBeVisible();
    const shared = await clickAndDownload(reader, () => reader.getByRole('link', { name: 'report.pdf' }).click());
    expect(shared.suggestedFilename()).toBe('report.pdf');
    expect(await bytesOf(shared)).toBe(PDF);
    await expect(reader.getByRole('button', { name: 'Log in' })).toHaveCount(0);
    expect(new URL(reader.url()).pathname).toBe(new URL(link).pathname);
    await expectAccessible(reader, `shared page with a file link at ${width} px`);
    await stranger.close();
  });
}
