import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { precompress } from './compress-plugin.js';

// The client builds into dist/public, which the service serves (src/web/web.routes.ts).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [
    preact({ prerender: { enabled: false } }),
    // The installable app (docs/web-client.md, "Offline and installing"): a web manifest and a
    // Workbox service worker (sw.js, at the root scope) that precaches the app shell and the hashed
    // assets and serves them without a network. It caches nothing of the API: notes seen before are
    // kept in IndexedDB by the client (web/src/offline/). Registered by the client itself, lazily,
    // after the first screen (web/src/app/pwa.ts); a new version waits for the user's Reload.
    VitePWA({
      registerType: 'prompt',
      injectRegister: false,
      filename: 'sw.js',
      manifestFilename: 'manifest.webmanifest',
      // The icons are among the build's files (globPatterns): listed once.
      includeManifestIcons: false,
      manifest: {
        id: '/',
        name: 'Vellum',
        short_name: 'Vellum',
        description: 'Your notes, with every version kept',
        start_url: '/',
        scope: '/',
        display: 'standalone',
        background_color: '#fbfaf7',
        theme_color: '#2f4fc4',
        icons: [
          { src: '/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: '/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      workbox: {
        // The app shell and the hashed assets (the .br and .gz copies are the server's business).
        globPatterns: ['**/*.{js,css,html,svg,png,webmanifest}'],
        // Every page of the app opens offline from the cached index.html; the API, the service's
        // own paths and files never do (a navigation to them goes to the network).
        navigateFallback: '/index.html',
        navigateFallbackDenylist: [/^\/(api|healthz|readyz|metrics)(\/|$)/],
        // No runtime caching at all: no API answer, attachment or sign-in is ever put in a cache.
        runtimeCaching: [],
        cleanupOutdatedCaches: true,
        // The Markdown worker with highlight.js is the largest chunk.
        maximumFileSizeToCacheInBytes: 3_000_000,
      },
    }),
    precompress(),
  ],
  // The Markdown worker as a module, so highlight.js stays a chunk of its own, loaded on first need.
  worker: { format: 'es' },
  build: {
    outDir: '../dist/public',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline <script> or data: module preload: the page's CSP allows scripts from 'self' only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    // .vite/manifest.json: what index.html loads and what loads later (scripts/web-size.ts).
    // The service serves no dot-folders, so it stays private to the build.
    manifest: true,
    target: 'es2022',
  },
});
