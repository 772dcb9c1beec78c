import type { Browser, BrowserContext, Page } from '@playwright/test';
import { ADMIN, expect, expectAccessible, GOOD_PASSWORD, logIn, signUp, test, uniqueName } from './fixtures';

// The administrator and the people they let in or shut out, each in a browser context of their own.
const contexts: BrowserContext[] = [];
async function person(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}
test.afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function openAdministration(page: Page): Promise<void> {
  await logIn(page, ADMIN.username, ADMIN.password);
  await page.getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByRole('heading', { name: 'Administration' })).toBeVisible();
}

test('an administrator invites someone: the link signs them up once, and the invitation leaves the list', async ({
  browser,
}) => {
  const admin = await person(browser);
  await openAdministration(admin);
  const invitations = admin.getByRole('region', { name: 'Invitations' });
  await invitations.getByLabel('E-mail (optional)').fill('sam@example.com');
  await invitations.getByRole('button', { name: 'Create invitation' }).click();
  const link = await invitations.getByRole('textbox', { name: 'Invitation link' }).inputValue();
  expect(link).toMatch(/\/signup\?invitation=[A-Za-z0-9_-]{43}$/);
  await expect(invitations.getByRole('listitem', { name: 'Invitation sam@example.com' })).toBeVisible();
  await expectAccessible(admin, 'administration with invitations');

  const sam = await person(browser);
  await sam.goto(link);
  await expect(sam.getByText('You were invited: choose a username and a password.')).toBeVisible();
  const name = uniqueName('sam');
  await sam.getByLabel('Username').fill(name);
  await sam.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
  await sam.getByRole('button', { name: 'Sign up' }).click();
  await expect(sam.getByRole('button', { name: 'New note' })).toBeVisible();

  // Used: gone from the open invitations, and the link works no more.
  await admin.reload();
  await expect(
    admin.getByRole('region', { name: 'Invitations' }).getByRole('listitem', { name: 'Invitation sam@example.com' }),
  ).toHaveCount(0);
  const late = await person(browser);
  await late.goto(link);
  await late.getByLabel('Username').fill(uniqueName('late'));
  await late.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
  await late.getByRole('button', { name: 'Sign up' }).click();
  await expect(late.getByRole('alert')).toContainText('needs a valid invitation');
});

test('an administrator disables an account: its open page is signed out and it cannot log in until enabled', async ({
  browser,
}) => {
  const user = await person(browser);
  const name = await signUp(user);
  const admin = await person(browser);
  await openAdministration(admin);
  const row = admin.getByRole('listitem', { name, exact: true });
  // Accounts are listed oldest first, 50 a page, and this worker's service holds other specs' too.
  const users = admin.getByRole('region', { name: 'Users' });
  await expect(users.getByRole('listitem').first()).toBeVisible();
  while ((await row.count()) === 0) {
    const next = users.getByRole('button', { name: 'Next' });
    await expect(next, `${name} is listed`).toBeEnabled();
    const first = await users.getByRole('listitem').first().getAttribute('aria-label');
    await next.click();
    await expect(users.getByRole('listitem').first()).not.toHaveAttribute('aria-label', first ?? '');
  }
  // Asked first, as on the account's own page: dismissed, nothing changes; accepted, it is disabled.
  const asked: string[] = [];
  admin.once('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.dismiss();
  });
  await row.getByRole('button', { name: 'Disable' }).click();
  await expect.poll(() => asked.length).toBe(1);
  await expect(row).not.toContainText('(disabled)');
  admin.once('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.accept();
  });
  await row.getByRole('button', { name: 'Disable' }).click();
  await expect(admin.getByRole('status').filter({ hasText: `“${name}” disabled.` })).toBeVisible();
  expect(asked).toEqual(
    Array(2).fill(
      `Disable “${name}”? Every session of it ends at once, its tokens stop working and it cannot log in until enabled.`,
    ),
  );
  await expect(row).toContainText('(disabled)');

  // Its sessions ended: the open page is told by its event stream and asks to log in; a login is refused.
  await expect(user.getByRole('status').filter({ hasText: 'Your session has ended.' })).toBeVisible();
  await expect(user.getByRole('button', { name: 'Log in' })).toBeVisible();
  await user.getByLabel('Username').fill(name);
  await user.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
  await user.getByRole('button', { name: 'Log in' }).click();
  await expect(user.getByRole('alert')).toContainText('Invalid credentials');

  await row.getByRole('button', { name: 'Enable' }).click();
  await expect(row).not.toContainText('(disabled)');
  await user.getByRole('button', { name: 'Log in' }).click();
  await expect(user.getByRole('button', { name: 'New note' })).toBeVisible();
});
