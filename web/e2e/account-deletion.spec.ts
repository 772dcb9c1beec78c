import fs from 'node:fs';
import { createNote, expect, expectAccessible, GOOD_PASSWORD, signUp, test } from './fixtures';

// Issue #42, item 10: deleting the account said what it deletes only in a confirm box, asked "are
// you sure" before the password was checked (a wrong one: the box again), suggested no export and
// showed nothing afterwards. Now: what goes and an export to keep first are said, the password is
// the one confirmation (a wrong one said in place, no dialog ever), and the login page says it is done.

for (const [width, scheme] of [
  [375, 'light'],
  [1280, 'dark'],
] as const) {
  test(`at ${width} px, ${scheme}: delete the account — an export offered first, the password the one confirmation, done said after`, async ({
    browser,
  }) => {
    const context = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: scheme });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const username = await signUp(page);
    await createNote(page, 'Recipes', 'bread and soup');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const deletion = page.getByRole('region', { name: 'Delete account' });
    // On a phone the Account page's sections are folded under their headings (phone.spec.ts).
    if (width < 720) await deletion.getByRole('button', { name: 'Delete account', exact: true }).click();
    await expect(deletion).toContainText('deletes every note in it, with their versions, files and shares, for good');
    await deletion.getByRole('button', { name: 'Delete account…' }).click();
    const password = deletion.getByLabel('Confirm with your password');
    await expect(password).toBeFocused();

    // The export, offered here, downloads the notes.
    const downloading = page.waitForEvent('download');
    await deletion.getByRole('button', { name: 'Download an export' }).click();
    const zip = fs.readFileSync((await (await downloading).path())!);
    expect(zip.includes(Buffer.from('Recipes.md'))).toBe(true);
    await expect(deletion.getByRole('status')).toHaveText('Export downloaded (Markdown files in a zip).');
    await expectAccessible(page, `delete account, asked at ${width} px, ${scheme}`);

    // A wrong password is said at once, in place; nothing was asked before it and nothing is deleted.
    const destroy = deletion.getByRole('button', { name: 'Delete my account and notes for good' });
    await password.fill('not-my-password-at-all');
    await destroy.click();
    await expect(deletion.getByRole('alert')).toHaveText('That password is wrong. Nothing was deleted; try again.');
    await expect(password).toHaveAttribute('aria-invalid', 'true');
    await expect(password).toBeFocused();
    await expectAccessible(page, `delete account, wrong password at ${width} px, ${scheme}`);

    await password.fill(GOOD_PASSWORD);
    await destroy.click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('status')).toHaveText(
      'Your account is deleted, with every note in it, and this device has forgotten it.',
    );
    await expectAccessible(page, `after deleting the account at ${width} px, ${scheme}`);
    expect(dialogs).toEqual([]);

    // It is gone: its username and password sign in no more.
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('alert')).toHaveText('Invalid credentials');
    await context.close();
  });
}
