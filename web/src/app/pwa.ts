/// <reference types="vite-plugin-pwa/vanillajs" />
import { registerSW } from 'virtual:pwa-register';

/**
 * Registers the service worker (vite.config.ts, VitePWA): loaded after the first screen, so its
 * code costs the first screen nothing. A new version of the client waits until the user asks for
 * it: `onUpdate` gets the function that activates it and reloads the page.
 */
export function startServiceWorker(onUpdate: (activate: () => void) => void): void {
  if (!('serviceWorker' in navigator)) return;
  const update = registerSW({
    onNeedRefresh: () => onUpdate(() => void update(true)),
    // Refused (a private window, a browser policy): the app works as before, online.
    onRegisterError: () => undefined,
  });
}
