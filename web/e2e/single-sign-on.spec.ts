import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLIENT_ID, CLIENT_SECRET, startProvider } from '../../test/helpers/oidc';
import { expect, freePort, startService, test } from './fixtures';

// Its own service, with single sign-on against a real OpenID Connect provider (oidc-provider from
// npm, its development login form) started here; the other specs' service has none.
test("Sign in with the provider: the button, the provider's pages, back signed in as a new account", async ({
  page,
}) => {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const provider = await startProvider(`${origin}/api/auth/oidc/callback`, {
    'sub-dana': { preferred_username: 'dana.sso', email: 'dana@example.test' },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-e2e-sso-'));
  const { child } = await startService(path.join(dir, 'vellum.db'), {
    port,
    env: {
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_NAME: 'Example ID',
    },
  });
  try {
    await page.goto(`${origin}/login`);
    await expect(page.getByRole('link', { name: 'Forgot password?' })).toBeVisible();
    await page.getByRole('button', { name: 'Sign in with Example ID' }).click();

    // The provider's own pages: its login form (any password), then its consent page.
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill('sub-dana');
    await page.locator('input[name="password"]').fill('anything');
    await page.locator('button[type="submit"]').click();
    await page.getByRole('button', { name: 'Continue' }).click();

    // Back at Vellum, signed in with the refresh cookie the callback set.
    await page.waitForURL(`${origin}/`);
    await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
    await page.goto(`${origin}/account`);
    await expect(page.getByText('Signed in as dana.sso')).toBeVisible();
    await expect(page.getByRole('textbox', { name: 'E-mail address' })).toBeVisible();
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await provider.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('Forgot password? leads to a request that answers alike for anyone; /reset without a valid token says so', async ({
  page,
  service,
}) => {
  await page.goto(`${service.origin}/login`);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.getByLabel('Username or e-mail address').fill('nobody-at-all');
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await expect(page.getByRole('status')).toContainText('If this account has a verified e-mail address');
  await page.goto(`${service.origin}/reset?token=not-a-real-token`);
  await page.getByLabel('New password').fill('amber-Orchard-compass-77-softly');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page.getByRole('alert')).toContainText('This link is invalid, has expired or was already used');
});
