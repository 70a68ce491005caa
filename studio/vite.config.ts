// The studio's build: Preact through esbuild's automatic JSX runtime (no plugin), fingerprinted
// assets under /studio/assets/, no inline script or style (the server's Content-Security-Policy
// forbids them). dist/.keep is written back after the build so that `//go:embed all:dist` in
// studio.go compiles on a clean tree too.
import { writeFileSync } from 'node:fs'
import { defineConfig } from 'vite'

export default defineConfig({
  base: '/studio/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  plugins: [
    {
      name: 'keep-dist-placeholder',
      closeBundle() {
        writeFileSync(new URL('./dist/.keep', import.meta.url), '')
      },
    },
  ],
})
