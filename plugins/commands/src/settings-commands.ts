import { PERMISSION_MODES, Provider, type ICommandHostContext, type ICommandResult, type TStatusLineCommandSettingsPatch } from '@tessera/contracts';
import { commandModulePlugin, firstWord, ok, unsupported, usage } from './define-command.js';
import type { ISystemCommand, PermissionMode, Plugin } from './types.js';

const MODE_TEXT: Record<PermissionMode, string> = {
  default: 'asks before edits and commands',
  acceptEdits: 'edits inside the workspace run without asking',
  plan: 'read-only: nothing is changed',
  bypassPermissions: 'everything runs without asking (deny rules still apply)',
  dontAsk: 'calls that would ask are denied',
};

function modeCommand(name: 'permissions' | 'mode', description: string): ISystemCommand {
  return {
    name,
    description,
    argumentHint: '[mode]',
    modelInvocable: false,
    safety: 'write',
    lifecycle: 'inline',
    subcommands: PERMISSION_MODES.map((mode) => ({ name: mode, description: MODE_TEXT[mode], source: name })),
    execute(context, args) {
      const wanted = args.trim();
      if (!context.getPermissionMode) return unsupported(name, 'permission modes');
      const current = context.getPermissionMode();
      // The modes this host lets a user switch to (a server may refuse bypassPermissions).
      const offered = PERMISSION_MODES.filter((candidate) => context.allowsPermissionMode?.(candidate) !== false);
      if (wanted === '') {
        return ok(`Permission mode: ${current} (${MODE_TEXT[current]}).\nModes: ${offered.join(', ')}.`, { data: { mode: current } });
      }
      const mode = PERMISSION_MODES.find((candidate) => candidate.toLowerCase() === wanted.toLowerCase());
      if (!mode) return usage(name, '[mode]', `Unknown permission mode "${wanted}". Modes: ${PERMISSION_MODES.join(', ')}.`);
      if (context.invocation === 'model-tool') return { success: false, message: 'Only the user can change the permission mode.' };
      if (!offered.includes(mode)) {
        return { success: false, message: `Permission mode ${mode} is not allowed here (the host refuses it). Modes: ${offered.join(', ')}.`, data: { mode: current, refused: mode } };
      }
      if (!context.setPermissionMode) return unsupported(name, 'changing the permission mode');
      context.setPermissionMode(mode);
      const settings = context.getCommandHostAdapters().settings as { set?: (key: string, value: unknown) => void } | undefined;
      settings?.set?.('permissions.defaultMode', mode);
      return ok(`Permission mode: ${mode} (${MODE_TEXT[mode]}).`, { data: { mode, previous: current } });
    },
  };
}

/** `/permissions [mode]`: shows or changes the permission mode. User-invocable only. */
export const permissionsCommandDefinition = modeCommand('permissions', 'Show or change the permission mode');
/** `/mode [mode]`: the legacy name of `/permissions`; compose it only when asked for. */
export const modeCommandDefinition = modeCommand('mode', 'Show or change the permission mode (legacy name of /permissions)');

/** `/model [id]`: shows the model, or asks the host to switch (`model-change-requested`). */
export const modelCommandDefinition: ISystemCommand = {
  name: 'model',
  description: 'Show the model, or switch to another',
  argumentHint: '[model id]',
  safety: 'write',
  lifecycle: 'inline',
  execute(context, args) {
    const wanted = args.trim();
    const provider = context.services.getOptional(Provider);
    const current = context.getModel() ?? provider?.model ?? 'the provider default';
    if (wanted === '') return ok(`Model: ${current}${provider ? ` (provider ${provider.name})` : ''}.`, { data: { model: current, provider: provider?.name ?? null } });
    if (/\s/.test(wanted)) return usage('model', '[model id]', `"${wanted}" is not a model id.`);
    return ok(`Switching to ${wanted}.`, { effects: [{ type: 'model-change-requested', modelId: wanted }], data: { model: wanted } });
  },
};

/** `/language <language>`: the host changes the response language. */
export const languageCommandDefinition: ISystemCommand = {
  name: 'language',
  description: 'Set the language replies are written in',
  argumentHint: '<language>',
  safety: 'write',
  lifecycle: 'inline',
  execute(_context, args) {
    const language = args.trim();
    if (language === '') return usage('language', '<language>', 'A language is required (e.g. English, ko, 日本語).');
    if (language.length > 40) return usage('language', '<language>', 'That is too long for a language name.');
    return ok(`Replies will be in ${language}.`, { effects: [{ type: 'language-change-requested', language }] });
  },
};

/** `/statusline [on|off|branch on|off]`: the host patches its status line settings. */
export const statuslineCommandDefinition: ISystemCommand = {
  name: 'statusline',
  description: 'Show or hide the status line and its git branch',
  argumentHint: '[on|off|branch on|off]',
  safety: 'write',
  lifecycle: 'inline',
  subcommands: [
    { name: 'on', description: 'Show the status line', source: 'statusline' },
    { name: 'off', description: 'Hide the status line', source: 'statusline' },
    { name: 'branch', description: 'Show or hide the git branch', source: 'statusline', argumentHint: 'on|off' },
  ],
  execute(_context, args) {
    const words = args.trim().toLowerCase().split(/\s+/).filter(Boolean);
    let patch: TStatusLineCommandSettingsPatch | undefined;
    if (words.length === 1 && (words[0] === 'on' || words[0] === 'off')) patch = { enabled: words[0] === 'on' };
    if (words.length === 2 && words[0] === 'branch' && (words[1] === 'on' || words[1] === 'off')) patch = { showGitBranch: words[1] === 'on' };
    if (!patch) return usage('statusline', '[on|off|branch on|off]', words.length === 0 ? 'Say what to change.' : `Unknown arguments "${args.trim()}".`);
    return ok('Status line updated.', { effects: [{ type: 'statusline-settings-patch', patch }] });
  },
};

/** What a host offers `/provider` (the config plugin's profiles). */
export interface ProviderProfilesAdapter {
  list(): Array<{ name: string; provider: string; model?: string }>;
  current?(): string | undefined;
  test?(name: string): Promise<{ ok: boolean; message: string }>;
}

/** `/provider [current|list|use <profile>|test <profile>]`. */
export const providerCommandDefinition: ISystemCommand = {
  name: 'provider',
  description: 'Show, list, switch or test provider profiles',
  argumentHint: '[current|list|use <profile>|test <profile>]',
  safety: 'write',
  lifecycle: 'inline',
  subcommands: ['current', 'list', 'use', 'test'].map((name) => ({ name, description: `${name} provider profiles`, source: 'provider' })),
  async execute(context, args): Promise<ICommandResult> {
    const [sub, rest] = firstWord(args);
    const provider = context.services.getOptional(Provider);
    const profiles = context.getCommandHostAdapters().providerProfiles as ProviderProfilesAdapter | undefined;
    switch (sub) {
      case '':
      case 'current':
        return ok(provider ? `Provider: ${provider.name}, model ${context.getModel() ?? provider.model ?? 'default'}.` : 'No provider is configured.', { data: { provider: provider?.name ?? null } });
      case 'list': {
        if (!profiles) return unsupported('provider', 'provider profiles (settings)');
        const list = profiles.list();
        const current = profiles.current?.();
        if (list.length === 0) return ok('No provider profiles are configured.');
        return ok(list.map((profile) => `${profile.name === current ? '*' : ' '} ${profile.name}: ${profile.provider}${profile.model ? ` / ${profile.model}` : ''}`).join('\n'));
      }
      case 'use': {
        if (!profiles) return unsupported('provider', 'provider profiles (settings)');
        const profile = profiles.list().find((candidate) => candidate.name === rest);
        if (!profile) return usage('provider', 'use <profile>', rest === '' ? 'Name a profile.' : `No provider profile "${rest}".`);
        return ok(`Switching to ${profile.name}.`, { effects: [{ type: 'model-change-requested', modelId: profile.model ?? profile.name }] });
      }
      case 'test': {
        if (!profiles?.test) return unsupported('provider', 'testing provider profiles');
        if (rest === '') return usage('provider', 'test <profile>', 'Name a profile.');
        const result = await profiles.test(rest);
        return { success: result.ok, message: result.message };
      }
      default:
        return usage('provider', '[current|list|use <profile>|test <profile>]', `Unknown subcommand "${sub}".`);
    }
  },
};

export const permissionsCommand = (): Plugin => commandModulePlugin('permissions', [permissionsCommandDefinition]);
export const legacyModeCommand = (): Plugin => commandModulePlugin('mode', [modeCommandDefinition]);
export const modelCommand = (): Plugin => commandModulePlugin('model', [modelCommandDefinition]);
export const languageCommand = (): Plugin => commandModulePlugin('language', [languageCommandDefinition]);
export const statuslineCommand = (): Plugin => commandModulePlugin('statusline', [statuslineCommandDefinition]);
export const providerCommand = (): Plugin => commandModulePlugin('provider', [providerCommandDefinition]);


