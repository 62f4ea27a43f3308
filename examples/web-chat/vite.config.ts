import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In `npm run dev` / `npm run preview` the page talks to its own origin and Vite forwards the
// API to `tessera serve` (TESSERA_URL, default http://127.0.0.1:8787): no CORS to configure.
const target = process.env.TESSERA_URL ?? 'http://127.0.0.1:8787';
const proxy = { '/v1': { target, changeOrigin: true }, '/health': { target, changeOrigin: true } };

export default defineConfig({
  plugins: [react()],
  server: { host: '127.0.0.1', port: 5173, proxy },
  preview: { host: '127.0.0.1', port: 4173, proxy },
  build: { outDir: 'dist', emptyOutDir: true },
});
