import { defineConfig } from 'vite';

// Served by the gateway under /console (src/console/routes.ts); the build is committed in console/dist.
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline script anywhere: the CSP is script-src 'self'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
