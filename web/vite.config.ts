import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { precompress } from './compress-plugin.js';

// The client builds into dist/public, which the service serves (src/web/web.routes.ts).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact({ prerender: { enabled: false } }), precompress()],
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
