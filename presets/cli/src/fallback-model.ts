import { Provider, ProviderError, type AssistantMessage, type ProviderRequest, copyWith } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';

/**
 * `--fallback-model a,b`: when a call fails because the model is overloaded (after the
 * provider's own retries) and nothing has streamed yet, the same request goes to the next
 * model of the chain. The provider is decorated, so every session of the kernel gets it.
 */
export function fallbackModels(models: readonly string[], onSwitch?: (from: string | undefined, to: string) => void): Plugin {
  const chain = models.filter((model) => model.trim() !== '').map((model) => model.trim());
  return definePlugin({
    name: 'cli-fallback-model',
    register({ decorate }) {
      if (chain.length === 0) return;
      decorate(Provider, (provider) => new FallbackProvider(provider, chain, onSwitch));
    },
  });
}

class FallbackProvider implements Provider {
  constructor(
    private readonly inner: Provider,
    private readonly chain: readonly string[],
    private readonly onSwitch: ((from: string | undefined, to: string) => void) | undefined,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  get model(): string | undefined {
    return this.inner.model;
  }

  getModelInfo(model?: string) {
    return this.inner.getModelInfo?.(model);
  }

  async stream(request: ProviderRequest): Promise<AssistantMessage> {
    let current = request.model ?? this.inner.model;
    const tried = new Set(current === undefined ? [] : [current]);
    for (;;) {
      try {
        return await this.inner.stream(current === request.model ? request : copyWith(request, { model: current }));
      } catch (error) {
        const next = this.chain.find((model) => !tried.has(model));
        const overloaded = error instanceof ProviderError && error.code === 'overloaded' && error.partialMessage === undefined;
        if (!overloaded || next === undefined || request.signal.aborted) throw error;
        this.onSwitch?.(current, next);
        tried.add(next);
        current = next;
      }
    }
  }
}
