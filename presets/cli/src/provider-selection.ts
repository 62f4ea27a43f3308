import type { ProviderProfile } from '@tessera/contracts';

/** Where the model comes from, decided before anything heavy is loaded. */
export type ProviderChoice =
  | { kind: 'profile'; name: string; profile: ProviderProfile; source: string }
  | { kind: 'demo'; source: string }
  | { kind: 'none'; message: string };

export interface ProviderSettings {
  currentProvider?: string;
  providers?: Record<string, Partial<ProviderProfile> & Record<string, unknown>>;
  /** The profile in use (`--provider`'s, else `currentProvider`'s), `$ENV:` substituted, with its key. */
  resolved?: { key: string; profile: ProviderProfile; files?: readonly string[] };
}

/** The built-in demo model's profile name (`--provider demo`). */
export const DEMO_PROVIDER = 'demo';

/** Claude Code's model aliases, mapped to the ids the Anthropic API takes. */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-4-6',
  opus: 'claude-opus-4-6',
  haiku: 'claude-haiku-4-5',
  'sonnet[1m]': 'claude-sonnet-4-6',
  opusplan: 'claude-opus-4-6',
};

export function resolveModelAlias(model: string | undefined): string | undefined {
  return model === undefined ? undefined : (MODEL_ALIASES[model] ?? model);
}

const NO_PROVIDER = `No model provider is configured. Set one of:
  ANTHROPIC_API_KEY=…                       (Anthropic; ANTHROPIC_BASE_URL for a gateway or proxy)
  OPENAI_API_KEY=… / OPENAI_BASE_URL=…      (OpenAI or any OpenAI-compatible server, e.g. http://localhost:11434/v1)
or add a profile:  tessera provider add <name> --type anthropic|openai --api-key-env VAR --use
or try the built-in demo model:  tessera --provider demo -p "…"`;

/**
 * Picks the provider, most specific first: `--provider <profile>`, the settings'
 * `currentProvider`, then `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`, then `OPENAI_API_KEY` /
 * `OPENAI_BASE_URL`. Nothing is built here.
 */
export function chooseProvider(flag: string | undefined, settings: ProviderSettings, env: Readonly<Record<string, string | undefined>>): ProviderChoice {
  if (flag === DEMO_PROVIDER && !settings.providers?.[DEMO_PROVIDER]) return { kind: 'demo', source: '--provider demo' };
  if (flag !== undefined) {
    if (settings.resolved?.key === flag) return { kind: 'profile', name: flag, profile: settings.resolved.profile, source: `--provider ${flag}` };
    const known = Object.keys(settings.providers ?? {});
    return {
      kind: 'none',
      message: `No provider profile "${flag}" in your user settings (known: ${known.length === 0 ? 'none' : known.join(', ')}). Add it with: tessera provider add ${flag} --type anthropic|openai …`,
    };
  }
  if (settings.resolved) return { kind: 'profile', name: settings.resolved.key, profile: settings.resolved.profile, source: `settings (currentProvider ${settings.resolved.key})` };
  const anthropicKey = env.ANTHROPIC_API_KEY;
  // As Claude Code does: ANTHROPIC_AUTH_TOKEN goes out as `Authorization: Bearer` (LLM gateways), the key as `x-api-key`.
  const anthropicToken = env.ANTHROPIC_AUTH_TOKEN;
  if (anthropicKey || anthropicToken || env.ANTHROPIC_BASE_URL) {
    return {
      kind: 'profile',
      name: 'anthropic',
      profile: {
        type: 'anthropic',
        ...(anthropicKey ? { apiKey: anthropicKey } : {}),
        ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
        ...(env.ANTHROPIC_MODEL ? { model: env.ANTHROPIC_MODEL } : {}),
        ...(anthropicToken ? { options: { authToken: anthropicToken } } : {}),
      },
      source: env.ANTHROPIC_API_KEY ? 'ANTHROPIC_API_KEY' : env.ANTHROPIC_AUTH_TOKEN ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_BASE_URL',
    };
  }
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) {
    return {
      kind: 'profile',
      name: 'openai',
      profile: {
        type: 'openai',
        // A local OpenAI-compatible server needs no key; the SDK still wants a string.
        apiKey: env.OPENAI_API_KEY || 'not-needed',
        ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
        model: env.OPENAI_MODEL || 'gpt-4o-mini',
      },
      source: env.OPENAI_API_KEY ? 'OPENAI_API_KEY' : 'OPENAI_BASE_URL',
    };
  }
  return { kind: 'none', message: NO_PROVIDER };
}

/** The profile with `--model` applied (aliases resolved). */
export function withModel(choice: Extract<ProviderChoice, { kind: 'profile' }>, model: string | undefined): ProviderProfile {
  const resolved = resolveModelAlias(model);
  return resolved === undefined ? choice.profile : { ...choice.profile, model: resolved };
}
