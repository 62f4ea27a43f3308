import { BundlePluginManager, type BundlePluginManagerOptions } from './bundle-plugin-manager.js';

export interface PluginCliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * `tessera plugin …`: the same commands as `/plugin`, for the CLI. The user folder is `HOME`
 * from `io.env` (`TESSERA_PLUGINS_DIR` moves the plugin store). Exits 0 on success, 1 otherwise;
 * there is no prompt, so trusting a marketplace or a plugin's hooks needs `--yes`.
 */
export async function runPluginCli(argv: string[], io: PluginCliIo, options: BundlePluginManagerOptions = {}): Promise<number> {
  const home = options.home ?? io.env.HOME ?? io.env.USERPROFILE;
  const pluginsDir = options.pluginsDir ?? io.env.TESSERA_PLUGINS_DIR;
  const manager = new BundlePluginManager({ ...options, cwd: options.cwd ?? io.cwd, ...(home ? { home } : {}), ...(pluginsDir ? { pluginsDir } : {}) });
  const result = await manager.exec(argv);
  (result.success ? io.stdout : io.stderr).write(`${result.message}\n`);
  return result.success ? 0 : 1;
}
