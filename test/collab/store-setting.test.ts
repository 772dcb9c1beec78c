import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

// TEST_COLLAB_STORE_MS lets a browser test stop the server before a live document is stored
// (web/e2e/collab-crash.spec.ts). A deployment that copied it would store late: it is refused there.

const secret = () => randomBytes(32).toString('hex');

test('TEST_COLLAB_STORE_MS is refused unless NODE_ENV=test', () => {
  for (const nodeEnv of ['production', 'development', undefined]) {
    const env = {
      JWT_SECRET: secret(),
      CSRF_SECRET: secret(),
      TEST_COLLAB_STORE_MS: '60000',
      ...(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }),
    };
    assert.throws(
      () => loadConfig(env),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          'TEST_COLLAB_STORE_MS is for the test suite only and is refused unless NODE_ENV=test; remove it',
      String(nodeEnv),
    );
  }
});

test('TEST_COLLAB_STORE_MS with NODE_ENV=test: a whole number of milliseconds; unset leaves the default', () => {
  assert.equal(loadConfig({ NODE_ENV: 'test', TEST_COLLAB_STORE_MS: '60000' }).collabStoreDebounceMs, 60_000);
  assert.equal(loadConfig({ NODE_ENV: 'test' }).collabStoreDebounceMs, undefined);
  for (const value of ['soon', '0', '1.5'])
    assert.throws(() => loadConfig({ NODE_ENV: 'test', TEST_COLLAB_STORE_MS: value }), ConfigError, value);
});
