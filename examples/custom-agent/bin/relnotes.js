#!/usr/bin/env node
// The `relnotes` command. A plain launcher (committed, not built) so the bin link exists from
// `npm ci` on; the program is the compiled `dist/main.js` (`npm run build` at the root).
import { main } from '../dist/main.js';

const controller = new AbortController();
// First Ctrl-C: stop the running prompt and save the session. Second: leave at once.
process.once('SIGINT', () => {
  controller.abort();
  process.once('SIGINT', () => process.exit(130));
});
const code = await main(process.argv.slice(2), { signal: controller.signal });
// Exit once stdout and stderr have drained, rather than wait for timers a plugin may keep.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
