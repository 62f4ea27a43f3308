#!/usr/bin/env node
// The `tessera` command. A plain launcher (committed, not built) so the bin link exists from
// `npm ci` on; the program itself is the built `dist/main.js`.
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv.slice(2));
