/**
 * A DI token: a registered symbol that carries the type of the service bound to it.
 * Tokens are created with `Symbol.for('tessera/<Name>')`, so two copies of this package
 * loaded side by side still agree on every token.
 */
export type Token<T> = symbol & { readonly __service?: T };

/** The service type a token stands for. */
export type TokenType<K> = K extends Token<infer T> ? T : never;

/**
 * Creates the token for `tessera/<name>`. Calling it twice with the same name returns the same
 * symbol, so a token can be declared in more than one place.
 */
export function createToken<T>(name: string): Token<T> {
  return Symbol.for(`tessera/${name}`) as Token<T>;
}

/** The readable name of a token (`tessera/Provider` → `Provider`). */
export function tokenName(token: symbol): string {
  const description = token.description ?? token.toString();
  return description.startsWith('tessera/') ? description.slice('tessera/'.length) : description;
}
