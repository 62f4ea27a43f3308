import { Provider, ProviderFactory, TesseraError, type ProviderProfile } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';

/** A profile that cannot become a provider: no type, no factory for its type, or an unresolved `$ENV:`. */
export class ProviderProfileError extends TesseraError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'provider_profile', category: 'configuration', recoverable: false, details });
  }
}

export interface ProviderSelectionOptions {
  /** The profile's key in settings (`providers.<name>`), named in error messages. */
  profileName?: string;
}

/**
 * Picks the factory whose `type` matches the profile and builds the provider. Config loading
 * has already substituted `$ENV:NAME` references; one still present means the variable is
 * unset, which is reported here rather than sent to the API as a key.
 */
export function createProviderFromProfile(
  profile: ProviderProfile,
  factories: readonly ProviderFactory[],
  options: ProviderSelectionOptions = {},
): Provider {
  const label = options.profileName === undefined ? 'The provider profile' : `Provider profile "${options.profileName}"`;
  const where = { ...(options.profileName === undefined ? {} : { profile: options.profileName }) };
  if (typeof profile !== 'object' || profile === null || typeof profile.type !== 'string' || profile.type === '') {
    throw new ProviderProfileError(`${label} has no "type": set it to one of ${known(factories)}.`, { ...where, field: 'type' });
  }
  const factory = factories.find((candidate) => candidate.type === profile.type);
  if (factory === undefined) {
    throw new ProviderProfileError(
      `${label} has type "${profile.type}", but no provider plugin handles it (known: ${known(factories)}). Add the provider plugin for "${profile.type}" or fix the type.`,
      { ...where, field: 'type', type: profile.type },
    );
  }
  const unresolved = /^\$ENV:(.+)$/.exec(profile.apiKey ?? '');
  if (unresolved) {
    throw new ProviderProfileError(
      `${label} takes its apiKey from the environment variable ${unresolved[1]}, which is not set. Export ${unresolved[1]} or put the key in the profile.`,
      { ...where, field: 'apiKey', variable: unresolved[1] },
    );
  }
  return factory.create(profile);
}

function known(factories: readonly ProviderFactory[]): string {
  return factories.length === 0 ? '(none registered)' : factories.map((factory) => `"${factory.type}"`).join(', ');
}

/**
 * Provides `Provider` from a settings profile, built by whichever contributed
 * `ProviderFactory` matches its `type`. Compose it with factory-only plugins
 * (`openaiProviderFactory()`, `anthropicProviderFactory()`), not with plugins that already
 * provide `Provider`. The factory keeps a copy of the profile; each kernel builds its own
 * provider when `Provider` is first resolved (a profile that cannot become one fails then).
 */
export function providerFromProfile(profile: ProviderProfile, options: ProviderSelectionOptions = {}): Plugin {
  if (typeof profile !== 'object' || profile === null) {
    throw new ProviderProfileError(`providerFromProfile needs a provider profile object (got ${String(profile)}).`, { field: 'profile' });
  }
  const kept: ProviderProfile = { ...profile };
  const selection: ProviderSelectionOptions = { ...options };
  return definePlugin({
    name: 'provider-from-profile',
    provides: [Provider],
    optional: [ProviderFactory],
    register({ bind }) {
      bind(Provider)
        .toResolvedValue(
          (factories: ProviderFactory[] | undefined) => createProviderFromProfile(kept, factories ?? [], selection),
          [{ serviceIdentifier: ProviderFactory, isMultiple: true, optional: true }],
        )
        .inSingletonScope();
    },
  });
}
