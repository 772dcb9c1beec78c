import { expect, expectAccessible, GOOD_PASSWORD, logIn, signUp, test } from './fixtures';

/**
 * Issue #37: what an access token alone must not do (end sessions, add or remove passkeys) asks
 * for the password again, in a small dialog: labelled, focused, cancelled with Esc or Cancel
 * (focus back on the button that opened it), a wrong password said in the dialog, which stays open.
 */
test('ending another session asks for the password in an accessible dialog', async ({ browser }) => {
  const laptop = await browser.newContext();
  const phone = await browser.newContext({ userAgent: 'Vellum test phone' });
  const a = await laptop.newPage();
  const b = await phone.newPage();
  const username = await signUp(a);
  await logIn(b, username);

  await a.getByRole('link', { name: 'Account' }).click();
  const sessions = a.getByRole('region', { name: 'Sessions' }).getByRole('listitem');
  await expect(sessions).toHaveCount(2);
  const end = sessions.filter({ hasText: 'Vellum test phone' }).getByRole('button', { name: 'End session' });

  // Esc: nothing happens, and focus is back on the button.
  await end.click();
  const dialog = a.getByRole('dialog', { name: 'End the session on Vellum test phone?' });
  await expect(dialog).toBeVisible();
  const password = dialog.getByLabel('Password');
  await expect(password).toBeFocused();
  await expect(password).toHaveAttribute('type', 'password');
  await expect(password).toHaveAttribute('autocomplete', 'current-password');
  await expectAccessible(a, 'the password dialog');
  await a.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(end).toBeFocused();
  await expect(sessions).toHaveCount(2);

  // Cancel does the same.
  await end.click();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(end).toBeFocused();

  // Empty, then wrong: said in the dialog, which stays open with the field focused; still signed in.
  await end.click();
  await dialog.getByRole('button', { name: 'End session' }).click();
  await expect(dialog.getByRole('alert')).toHaveText('Enter your password.');
  await password.fill('not my password at all');
  await password.press('Enter');
  await expect(dialog.getByRole('alert')).toHaveText('That password is wrong. Try again.');
  await expect(password).toBeFocused();
  await expect(password).toHaveValue('');
  await expect(password).toHaveAttribute('aria-invalid', 'true');
  await expectAccessible(a, 'the password dialog with an error');
  await expect(sessions).toHaveCount(2);
  await expect(a.getByRole('button', { name: 'Log out', exact: true })).toBeVisible();

  // The right one: the dialog closes and the phone is signed out.
  await password.fill(GOOD_PASSWORD);
  await dialog.getByRole('button', { name: 'End session' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(a.getByRole('region', { name: 'Sessions' }).getByRole('status')).toHaveText(
    'Session ended: Vellum test phone is signed out within 15 minutes at most.',
  );
  await expect(sessions).toHaveCount(1);
  await b.reload();
  await expect(b.getByRole('button', { name: 'Log in' })).toBeVisible();
  await laptop.close();
  await phone.close();
});

/**
 * An account without a password (single sign-on) confirms with a one-time code, or a passkey. No
 * route makes such an account without a provider and an enrolled factor, so GET /auth/me is
 * answered here with `has_password: false` (and one passkey): the dialog's other branch, and the
 * body it sends, which the real server (this account has a password) refuses as a wrong code.
 */
test('an account without a password is asked for a one-time code, or a passkey, instead', async ({ browser }) => {
  const laptop = await browser.newContext();
  const phone = await browser.newContext({ userAgent: 'Vellum test phone' });
  const a = await laptop.newPage();
  const b = await phone.newPage();
  const username = await signUp(a);
  await logIn(b, username);
  await a.route('**/api/auth/me', async (route) => {
    const response = await route.fetch();
    const me = await response.json();
    await route.fulfill({ response, json: { ...me, has_password: false, mfa: { ...me.mfa, passkeys: 1 } } });
  });

  await a.getByRole('link', { name: 'Account' }).click();
  const sessions = a.getByRole('region', { name: 'Sessions' }).getByRole('listitem');
  await expect(sessions).toHaveCount(2);
  await sessions.filter({ hasText: 'Vellum test phone' }).getByRole('button', { name: 'End session' }).click();
  const dialog = a.getByRole('dialog', { name: 'End the session on Vellum test phone?' });
  const code = dialog.getByLabel('One-time code');
  await expect(code).toBeFocused();
  await expect(code).toHaveAttribute('type', 'text');
  await expect(code).toHaveAttribute('autocomplete', 'one-time-code');
  await expect(dialog.getByLabel('Password')).toHaveCount(0);
  await expect(code).toHaveAccessibleDescription(/Your account has no password/);
  await expect(dialog.getByRole('button', { name: 'Use a passkey' })).toBeVisible();
  await expectAccessible(a, 'the re-authentication dialog of an account without a password');

  await dialog.getByRole('button', { name: 'End session' }).click();
  await expect(dialog.getByRole('alert')).toHaveText('Enter a code from your authenticator app, or a recovery code.');
  await code.fill(' 123456 ');
  const sent = a.waitForRequest((r) => r.method() === 'DELETE' && r.url().includes('/api/auth/sessions/'));
  await code.press('Enter');
  expect((await sent).postDataJSON()).toEqual({ code: '123456' });
  await expect(dialog.getByRole('alert')).toHaveText('That code is wrong. Try again.');
  await expect(code).toBeFocused();
  await expect(code).toHaveValue('');
  await expect(sessions).toHaveCount(2);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  await laptop.close();
  await phone.close();
});

test('a new personal token says a missing or wrong password plainly, from its own field', async ({ page }) => {
  await signUp(page);
  await page.getByRole('link', { name: 'Account' }).click();
  const tokens = page.getByRole('region', { name: 'Access tokens' });
  await tokens.getByRole('button', { name: 'New token' }).click();
  await tokens.getByLabel('Token name').fill('Script');
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await expect(tokens.getByRole('alert')).toHaveText('Enter your current password.');
  await tokens.getByLabel('Current password').fill('not my password at all');
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await expect(tokens.getByRole('alert')).toHaveText('That password is wrong. Try again.');
  // Still signed in: a refused password is an answer, not a lost session.
  await expect(page.getByRole('button', { name: 'Log out', exact: true })).toBeVisible();
  await tokens.getByLabel('Current password').fill(GOOD_PASSWORD);
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await expect(tokens.getByText('Your new token — copy it now, it is not shown again:')).toBeVisible();
});
