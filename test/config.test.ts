import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

/** Start-up settings whose mistakes used to pass unnoticed (src/config.ts). */
describe('configuration read at start-up', () => {
  const refused = (env: Record<string, string>, message: string) =>
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && error.message === message,
      JSON.stringify(env),
    );

  test('NODE_ENV is production, development or test; a typo is refused, not run as development', () => {
    for (const value of ['prod', 'Production', 'staging'])
      refused({ NODE_ENV: value }, `NODE_ENV must be production, development or test, got "${value}"`);
    const secret = () => randomBytes(32).toString('hex');
    assert.equal(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret(), CSRF_SECRET: secret() }).production, true);
    assert.equal(loadConfig({ NODE_ENV: 'development' }).production, false);
    assert.equal(loadConfig({}).production, false);
  });

  test('numbers are decimal: hexadecimal and exponents are refused, not read as another number', () => {
    for (const value of ['0x1F90', '1e3', '8080abc'])
      refused({ PORT: value }, `PORT must be a number from 0 to 65535, got "${value}"`);
    assert.equal(loadConfig({ PORT: ' 8081 ' }).port, 8081);
  });

  test('COOKIE_DOMAIN is a host name: a URL, a port or a stray character is refused at start-up', () => {
    for (const value of ['https://notes.example.com', 'notes.example.com:8080', 'notes.example.com/x', 'bad domain;'])
      refused(
        { COOKIE_DOMAIN: value },
        `COOKIE_DOMAIN must be a host name such as notes.example.com (no scheme, port or path), got "${value}"`,
      );
    for (const value of ['notes.example.com', '.example.com', 'localhost'])
      assert.equal(loadConfig({ COOKIE_DOMAIN: value }).cookieDomain, value);
  });
});
