import { expect, expectAccessible, logIn, signUp, test } from './fixtures';

// Issue #42, item 6: "Log out" signs out this device only; "Log out everywhere" (Account, Sessions)
// signs out every device.

for (const width of [375, 1280]) {
  test(`at ${width} px: Log out ends only this device’s session; Log out everywhere ends them all`, async ({
    browser,
  }) => {
    const viewport = { width, height: 800 };
    const laptop = await browser.newContext({ viewport });
    const phone = await browser.newContext({ userAgent: 'Vellum test phone', viewport });
    const a = await laptop.newPage();
    const b = await phone.newPage();
    const username = await signUp(a);
    await logIn(b, username);

    await a.getByRole('button', { name: 'Log out', exact: true }).click();
    await expect(a.getByRole('button', { name: 'Log in' })).toBeVisible();
    // The laptop's refresh cookie is gone: a reload stays signed out.
    await a.reload();
    await expect(a.getByRole('button', { name: 'Log in' })).toBeVisible();
    // The phone is still signed in, also after a reload (its refresh cookie still works).
    await b.reload();
    await expect(b.getByRole('button', { name: 'New note' })).toBeVisible();
    await b.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const sessions = b.getByRole('region', { name: 'Sessions' });
    // On a phone the Account page's sections are folded under their headings (phone.spec.ts).
    if (width < 720) await sessions.getByRole('button', { name: 'Sessions' }).click();
    await expect(sessions.getByRole('listitem')).toHaveCount(1);

    await logIn(a, username);
    await expect(sessions.getByRole('button', { name: 'Log out everywhere' })).toBeVisible();
    await expectAccessible(b, `sessions with Log out everywhere at ${width} px`);
    b.once('dialog', (dialog) => void dialog.accept());
    await sessions.getByRole('button', { name: 'Log out everywhere' }).click();
    await expect(b.getByRole('button', { name: 'Log in' })).toBeVisible();
    await b.reload();
    await expect(b.getByRole('button', { name: 'Log in' })).toBeVisible();
    await a.reload();
    await expect(a.getByRole('button', { name: 'Log in' })).toBeVisible();
    await laptop.close();
    await phone.close();
  });
}
