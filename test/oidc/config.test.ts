import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = { DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' };

test('single sign-on: off without settings, on with all three, defaults from the contract', () => {
  assert.equal(loadConfig(base).oidc, null);
  const config = loadConfig({
    ...base,
    OIDC_ISSUER: 'https://id.example.com/realms/team',
    OIDC_CLIENT_ID: 'vellum',
    OIDC_CLIENT_SECRET: 's3cret',
  });
  assert.deepEqual(config.oidc, {
    issuer: 'https://id.example.com/realms/team',
    clientId: 'vellum',
    clientSecret: 's3cret',
    name: 'Single sign-on',
    scopes: 'openid profile email',
    usernameClaim: 'preferred_username',
    adminGroup: null,
  });
  assert.equal(config.passwordLogin, true);
  assert.equal(config.mail, null);
});

test('single sign-on: one or two of the three settings, a bad issuer or scopes without openid stop start-up', () => {
  assert.throws(
    () => loadConfig({ ...base, OIDC_ISSUER: 'https://id.example.com' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set together/.test(error.message),
  );
  const all = { ...base, OIDC_CLIENT_ID: 'v', OIDC_CLIENT_SECRET: 's' };
  assert.throws(() => loadConfig({ ...all, OIDC_ISSUER: 'not a url' }), /OIDC_ISSUER/);
  assert.throws(() => loadConfig({ ...all, OIDC_ISSUER: 'ftp://id.example.com' }), /OIDC_ISSUER/);
  assert.throws(() => loadConfig({ ...all, OIDC_ISSUER: 'https://id.example.com', OIDC_SCOPES: 'profile' }), /openid/);
});

test('PASSWORD_LOGIN and SMTP_URL / MAIL_FROM', () => {
  assert.equal(loadConfig({ ...base, PASSWORD_LOGIN: 'off' }).passwordLogin, false);
  assert.throws(() => loadConfig({ ...base, PASSWORD_LOGIN: 'maybe' }), /PASSWORD_LOGIN/);
  assert.deepEqual(
    loadConfig({ ...base, SMTP_URL: 'smtp://u:p@mail.example.com:587', PUBLIC_URL: 'https://notes.example.com' }).mail,
    {
      smtpUrl: 'smtp://u:p@mail.example.com:587',
      from: 'Vellum <no-reply@notes.example.com>',
    },
  );
  assert.equal(
    loadConfig({ ...base, SMTP_URL: 'smtps://mail.example.com', MAIL_FROM: 'Notes <n@example.com>' }).mail?.from,
    'Notes <n@example.com>',
  );
  assert.throws(() => loadConfig({ ...base, SMTP_URL: 'http://mail.example.com' }), /SMTP_URL/);
});
