// Builds the dashboard into dist/ for embedding in the runmon binary: one JS and one CSS file under
// /assets/, no source maps, nothing loaded from elsewhere (the page works with no network beyond the
// server).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2020',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    reportCompressedSize: true,
  },
  server: { port: 5173, strictPort: false },
});
