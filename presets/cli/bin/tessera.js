#!/usr/bin/env node
// The `tessera` command. A plain launcher (committed, not built) so the bin link exists from
// `npm ci` on; the program itself is the bundled `dist-bundle/main.js` (`npm run build`,
// scripts/bundle-cli.mjs), or the unbundled `dist/main.js` when only `tsc -b` has run.
import { existsSync } from 'node:fs';

const bundled = new URL('../dist-bundle/main.js', import.meta.url);
const { main } = await import(existsSync(bundled) ? bundled.href : '../dist/main.js');

const code = await main(process.argv.slice(2));
// A CLI run is over when main returns: exit once stdout and stderr have drained, rather than
// wait for timers or workers a plugin may keep (a background shell the model left running).
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
