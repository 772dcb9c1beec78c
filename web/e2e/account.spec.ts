import { expect, GOOD_PASSWORD, logIn, signUp, test } from './fixtures';

const NEW_PASSWORD = 'copper-Meadow-river-91-softly-turning';

test('sessions: one device ends another; a password change signs the others out; deleting the account', async ({
  browser,
}) => {
  const laptop = await browser.newContext();
  const phone = await browser.newContext({ userAgent: 'Vellum test phone' });
  const a = await laptop.newPage();
  const b = await phone.newPage();
  const username = await signUp(a);
  await logIn(b, username);

  await a.getByRole('link', { name: 'Account' }).click();
  const sessions = a.getByRole('region', { name: 'Sessions' }).getByRole('listitem');
  await expect(sessions).toHaveCount(2);
  const phoneRow = sessions.filter({ hasText: 'Vellum test phone' });
  await expect(phoneRow).toHaveCount(1);
  // This device comes first, marked, and is signed out with Log out rather than ended here.
  await expect(sessions.first()).toContainText('This device');
  await expect(sessions.first().getByRole('button')).toHaveCount(0);
  await expect(phoneRow).not.toContainText('This device');
  await phoneRow.getByRole('button', { name: 'End session' }).click();
  // Ending it asks for the password again (issue #37).
  const confirm = a.getByRole('dialog', { name: 'End the session on Vellum test phone?' });
  await confirm.getByLabel('Password').fill(GOOD_PASSWORD);
  await confirm.getByRole('button', { name: 'End session' }).click();
  await expect(a.getByRole('region', { name: 'Sessions' }).getByRole('status')).toHaveText(
    'Session ended: Vellum test phone is signed out within 15 minutes at most.',
  );
  await expect(sessions).toHaveCount(1);
  // Devices by name, not by their user-agent strings.
  await expect(sessions.first().locator('.row-title')).toHaveText('Chrome on Linux');
  await expect(phoneRow).toHaveCount(0);
  // The phone's refresh cookie no longer works: a reload lands on the login screen.
  await b.reload();
  await expect(b.getByRole('button', { name: 'Log in' })).toBeVisible();

  // Change password: the rules show as typed; the other device is signed out, this one stays.
  await logIn(b, username);
  await a.getByLabel('Current password').fill(GOOD_PASSWORD);
  await a.getByLabel('New password').fill('too short');
  await expect(a.getByText('At least 15 characters (9 so far)')).toBeVisible();
  await a.getByLabel('New password').fill(NEW_PASSWORD);
  await expect(a.getByText(/\(hard to guess\)/)).toBeVisible();
  await a.locator('button[type="submit"]', { hasText: 'Change password' }).click();
  await expect(a.getByText('Password changed. Your other sessions were signed out.')).toBeVisible();
  await b.reload();
  await expect(b.getByRole('button', { name: 'Log in' })).toBeVisible();
  await a.reload();
  await expect(a.getByRole('heading', { name: 'Account', exact: true })).toBeVisible();

  await b.getByLabel('Username').fill(username);
  await b.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
  await b.getByRole('button', { name: 'Log in' }).click();
  await expect(b.getByRole('alert')).toHaveText('Invalid credentials');
  await logIn(b, username, NEW_PASSWORD);

  // Delete the account: a wrong password is refused; the right one ends everything.
  const deletion = a.getByRole('region', { name: 'Delete account' });
  await deletion.getByRole('button', { name: 'Delete account…' }).click();
  await deletion.getByLabel('Confirm with your password').fill(GOOD_PASSWORD);
  await deletion.getByRole('button', { name: 'Delete my account and notes for good' }).click();
  await expect(deletion.getByRole('alert')).toHaveText('That password is wrong. Nothing was deleted; try again.');
  await deletion.getByLabel('Confirm with your password').fill(NEW_PASSWORD);
  await deletion.getByRole('button', { name: 'Delete my account and notes for good' }).click();
  await expect(a.getByRole('button', { name: 'Log in' })).toBeVisible();
  await a.reload();
  await expect(a.getByRole('button', { name: 'Log in' })).toBeVisible();
  await b.reload();
  await expect(b.getByRole('button', { name: 'Log in' })).toBeVisible();
  await b.getByLabel('Username').fill(username);
  await b.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD);
  await b.getByRole('button', { name: 'Log in' }).click();
  await expect(b.getByRole('alert')).toHaveText('Invalid credentials');
  await laptop.close();
  await phone.close();
});
