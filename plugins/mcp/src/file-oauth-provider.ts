import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

interface StoredAuth {
  serverUrl: string;
  clientInformation?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  codeVerifier?: string;
}

export interface FileOAuthProviderOptions {
  server: string;
  serverUrl: string;
  /** Folder for the token files; created 0700, files written 0600. */
  directory: string;
  redirectUrl: string;
  clientName: string;
}

/**
 * Sign-ins waiting for the user, per token file. While one is pending, no other attempt may
 * start an authorization: the SDK would write a new PKCE verifier over the one the user's code
 * must be exchanged with.
 */
const pendingSignIns = new Map<string, Promise<void>>();

/**
 * An `OAuthClientProvider` for one remote server (authorization code + PKCE), keeping the
 * registered client, the tokens and the pending code verifier in a private file. It never opens
 * a browser: `redirectToAuthorization` only records the URL, and the MCP client hands it to the
 * host's `authorize` callback after the SDK gives up with `UnauthorizedError`.
 */
export class FileOAuthProvider implements OAuthClientProvider {
  private pendingUrl: URL | undefined;
  private readonly file: string;
  private readonly expectedState = randomBytes(16).toString('hex');

  constructor(private readonly options: FileOAuthProviderOptions) {
    const id = createHash('sha256').update(`${options.server}\u0000${options.serverUrl}`).digest('hex').slice(0, 24);
    this.file = join(options.directory, `${id}.json`);
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return this.expectedState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.read().clientInformation;
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed): void {
    this.write({ ...this.read(), clientInformation });
  }

  tokens(): OAuthTokens | undefined {
    return this.read().tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    const { codeVerifier: _used, ...rest } = this.read();
    this.write({ ...rest, tokens });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.pendingUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.write({ ...this.read(), codeVerifier });
  }

  codeVerifier(): string {
    const verifier = this.read().codeVerifier;
    if (verifier === undefined) throw new Error(`No PKCE code verifier is stored for MCP server "${this.options.server}"; start the authorization again.`);
    return verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    const stored = this.read();
    if (scope === 'all') this.write({ serverUrl: this.options.serverUrl });
    else if (scope === 'client') this.write({ ...stored, clientInformation: undefined });
    else if (scope === 'tokens') this.write({ ...stored, tokens: undefined });
    else if (scope === 'verifier') this.write({ ...stored, codeVerifier: undefined });
  }

  /** The authorization URL the SDK asked to open, once; `undefined` when none is pending. */
  takeAuthorizationUrl(): URL | undefined {
    const url = this.pendingUrl;
    this.pendingUrl = undefined;
    return url;
  }

  /** Marks a sign-in (the user's answer and the code exchange) as pending until `signIn` settles. */
  holdDuring(signIn: Promise<unknown>): void {
    const settled = signIn.then(
      () => undefined,
      () => undefined,
    );
    pendingSignIns.set(this.file, settled);
    void settled.then(() => {
      if (pendingSignIns.get(this.file) === settled) pendingSignIns.delete(this.file);
    });
  }

  /** Resolves once no sign-in for this token file is waiting for the user. */
  async signInSettled(): Promise<void> {
    for (let pending = pendingSignIns.get(this.file); pending; pending = pendingSignIns.get(this.file)) await pending;
  }

  /** True when `state` (from the redirect) is the one this provider sent. */
  checkState(state: string | undefined): boolean {
    return state === undefined || state === this.expectedState;
  }

  private read(): StoredAuth {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as StoredAuth;
      return parsed.serverUrl === this.options.serverUrl ? parsed : { serverUrl: this.options.serverUrl };
    } catch {
      return { serverUrl: this.options.serverUrl };
    }
  }

  private write(stored: StoredAuth): void {
    mkdirSync(this.options.directory, { recursive: true, mode: 0o700 });
    chmodSync(this.options.directory, 0o700);
    // Write then rename, so a crash never leaves half a token file.
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ ...stored, serverUrl: this.options.serverUrl }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.file);
  }
}
