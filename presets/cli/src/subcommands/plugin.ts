import { runPluginCli } from '@tessera/plugin-bundle-plugins';
import type { Subcommand } from '../io.js';

/**
 * `tessera plugin …`: marketplaces and bundle plugins (`marketplace add|list|update|remove`,
 * `install|uninstall|enable|disable|list`), the same commands as `/plugin` in a session.
 */
export const runPluginCommand: Subcommand = (argv, io) =>
  runPluginCli(
    [...argv],
    { stdout: { write: (text) => io.stdout(text) }, stderr: { write: (text) => io.stderr(text) }, cwd: io.cwd, env: io.env },
    { home: io.home, cwd: io.cwd },
  );
