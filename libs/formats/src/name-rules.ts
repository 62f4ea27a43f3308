import type { Diagnostic } from '@tessera/contracts';

/**
 * Agent and skill names that load without comment: lowercase letters, digits, hyphens, dots and
 * underscores, starting with a letter or digit (`powershell-5.1-expert`, `my_agent`). Claude
 * Code documents lowercase and hyphens, and loads these too.
 */
export const LOOSE_NAME = /^[a-z0-9][a-z0-9._-]*$/;

/** Lowercase words joined by single hyphens: what Claude Code asks plugin authors to write. */
export const KEBAB_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Characters that break a plugin or marketplace id: whitespace (Claude Code's own validator
 * refuses it), `@` (splits `plugin@marketplace`), `:` (splits `plugin:command`), path
 * separators (the id becomes a cache directory) and control characters.
 */
const BREAKS_PLUGIN_ID = /[\s@:/\\\u0000-\u001f\u007f]/;

/** A marketplace name must also be usable as a directory name under `~/.claude/plugins/`. */
const MARKETPLACE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Checks a plugin name (plugin.json `name` or a marketplace entry's `name`). An error only for
 * what Claude Code cannot use as an id; any other departure from kebab-case (uppercase, `.`,
 * `_`) loads as written with a warning.
 */
export function pluginNameDiagnostics(name: string, file: string, path: string): Diagnostic[] {
  if (name.trim() === '' || BREAKS_PLUGIN_ID.test(name)) {
    return [{
      severity: 'error',
      file,
      path,
      message: `Plugin name ${JSON.stringify(name)} cannot be used as an id: it may not be empty or contain spaces, \`@\`, \`:\`, \`/\`, \`\\\` or control characters. Rename it in kebab-case, e.g. \`${suggestKebab(name) || 'my-plugin'}\`.`,
    }];
  }
  if (KEBAB_NAME.test(name)) return [];
  return [{
    severity: 'warning',
    file,
    path,
    message: `Plugin name ${JSON.stringify(name)} is not kebab-case; it loads as written, but Claude Code asks for lowercase words joined by hyphens (\`${suggestKebab(name)}\`) and other tools may refuse it.`,
  }];
}

/** Checks a marketplace's own `name`, which names a directory and every `plugin@marketplace` id. */
export function marketplaceNameDiagnostics(name: string, file: string): Diagnostic[] {
  if (!MARKETPLACE_ID.test(name) || name.includes('..')) {
    return [{
      severity: 'error',
      file,
      path: 'name',
      message: `Marketplace name ${JSON.stringify(name)} cannot be used: Claude Code installs nothing from a marketplace whose name is not letters, digits, \`.\`, \`_\` and \`-\` starting with a letter or digit (and without \`..\`). Rename it, e.g. \`${suggestKebab(name) || 'my-marketplace'}\`.`,
    }];
  }
  if (KEBAB_NAME.test(name)) return [];
  return [{
    severity: 'warning',
    file,
    path: 'name',
    message: `Marketplace name ${JSON.stringify(name)} is not kebab-case; it loads as written, but Claude Code asks for lowercase words joined by hyphens (\`${suggestKebab(name)}\`).`,
  }];
}

function suggestKebab(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}
