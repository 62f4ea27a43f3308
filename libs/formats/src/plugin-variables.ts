/** Values for the plugin path variables, substituted where Claude Code substitutes them. */
export interface PluginVariables {
  /** `${CLAUDE_PLUGIN_ROOT}`: the plugin's install directory. */
  pluginRoot?: string;
  /** `${CLAUDE_PLUGIN_DATA}`: the plugin's persistent data directory. */
  pluginData?: string;
  /** `${CLAUDE_PROJECT_DIR}`. */
  projectDir?: string;
}

const VARIABLE = /\$\{(?:CLAUDE|TESSERA)_(PLUGIN_ROOT|PLUGIN_DATA|PROJECT_DIR)\}/g;
const KEYS = { PLUGIN_ROOT: 'pluginRoot', PLUGIN_DATA: 'pluginData', PROJECT_DIR: 'projectDir' } as const;

/** Replaces `${CLAUDE_PLUGIN_ROOT}` & co. (and `TESSERA_*`) whose value is known; others stay. */
export function expandPluginVariables(text: string, variables: PluginVariables): string {
  if (!text.includes('${')) return text;
  return text.replace(VARIABLE, (match, name: keyof typeof KEYS) => variables[KEYS[name]] ?? match);
}
