import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** examples/web-chat */
export const EXAMPLE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST_DIR = join(EXAMPLE_DIR, 'dist');
export const ARTIFACTS_DIR = join(EXAMPLE_DIR, 'test-artifacts');
const REPO_DIR = resolve(EXAMPLE_DIR, '..', '..');
const TESSERA_BIN = join(REPO_DIR, 'presets', 'cli', 'bin', 'tessera.js');

/** Debian's `chromium` (or CHROMIUM_PATH), when it is installed. */
export function findChromium(): string | undefined {
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

/** Chromium's flags for a quiet, headless run that reaches nothing but loopback. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The newest modification time under the page's sources (app/, index.html, the Vite and package config). */
function newestSource(): number {
  let newest = 0;
  const visit = (path: string): void => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const entry of ['app', 'index.html', 'vite.config.ts', 'package.json']) visit(join(EXAMPLE_DIR, entry));
  return newest;
}

/** Builds the page with Vite when dist/ is missing or older than its sources. */
export function ensurePageBuilt(): 'fresh' | 'built' {
  const index = join(DIST_DIR, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource()) return 'fresh';
  const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  // NODE_ENV is 'test' under vitest; the page is built as for production (React's production build).
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: EXAMPLE_DIR, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
  if (result.status !== 0) throw new Error(`vite build failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  return 'built';
}

export interface Running {
  url: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** The built page from a static server on loopback (unknown paths get index.html). */
export async function serveStatic(root: string): Promise<Running> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
    let file = resolve(root, `.${path}`);
    const inside = relative(root, file);
    if (inside.startsWith(`..${sep}`) || inside === '..') {
      response.writeHead(403).end();
      return;
    }
    if (!existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** Whether the `tessera` bin has something to run (`npm run build`, or at least `tsc -b presets/cli`). */
export function tesseraBuilt(): boolean {
  return existsSync(join(REPO_DIR, 'presets', 'cli', 'dist-bundle', 'tessera.cjs')) || existsSync(join(REPO_DIR, 'presets', 'cli', 'dist', 'main.js'));
}

/**
 * `tessera serve --provider demo` on a free loopback port, sessions under `root`, one token from
 * TESSERA_SERVER_TOKEN, and a `--config` that lets the page's origin call it (CORS).
 */
export async function startTessera(options: { root: string; home: string; token: string; corsOrigin: string; demoDelayMs: number }): Promise<Running & { output(): string }> {
  const config = join(options.home, 'server.json');
  writeFileSync(config, JSON.stringify({ corsOrigins: [options.corsOrigin] }));
  const child: ChildProcess = spawn(process.execPath, [TESSERA_BIN, 'serve', '--port', '0', '--root', options.root, '--provider', 'demo', '--config', config], {
    cwd: options.root,
    env: { PATH: process.env.PATH, HOME: options.home, TESSERA_SESSION_LOG: '0', TESSERA_SERVER_TOKEN: options.token, TESSERA_DEMO_DELAY_MS: String(options.demoDelayMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`tessera serve did not start within 30 s:\n${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Tessera is serving on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tessera serve exited (${code}) before it served:\n${output}`));
    });
  });
  return {
    url,
    output: () => output,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
