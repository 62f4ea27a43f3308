import { createHash, timingSafeEqual } from 'node:crypto';

/** A client identity: the token is kept only as its SHA-256 (hex), never in clear. */
export interface TokenEntry {
  /** The owner id sessions are recorded under (`alice`, `ci-bot`…). */
  id: string;
  /** `sha256(token)` as lowercase hex. */
  sha256: string;
}

/** `sha256(token)` as the config stores it (`tessera serve --hash-token` prints it). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Finds the owner of a bearer token, comparing hashes in constant time; undefined when none matches. */
export class TokenAuth {
  private readonly entries: Array<{ id: string; digest: Buffer }>;

  constructor(tokens: readonly TokenEntry[]) {
    const ids = new Set<string>();
    this.entries = tokens.map((entry, index) => {
      if (typeof entry.id !== 'string' || entry.id === '') throw new Error(`tokens[${index}].id must be a non-empty string`);
      if (ids.has(entry.id)) throw new Error(`tokens[${index}].id "${entry.id}" is used twice; ids name owners and must be unique`);
      ids.add(entry.id);
      if (typeof entry.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256)) throw new Error(`tokens[${index}].sha256 must be 64 lowercase hex characters (sha256 of the token)`);
      return { id: entry.id, digest: Buffer.from(entry.sha256, 'hex') };
    });
  }

  /** The owner for an `Authorization` header value (`Bearer <token>`). */
  owner(header: string | undefined | null): string | undefined {
    if (!header) return undefined;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return undefined;
    return this.ownerOfToken(match[1]!);
  }

  ownerOfToken(token: string): string | undefined {
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let found: string | undefined;
    // Every entry is compared, so the time taken does not tell which one matched.
    for (const entry of this.entries) if (timingSafeEqual(entry.digest, digest)) found = entry.id;
    return found;
  }
}

/** A fixed-window request budget per owner (requests per minute). */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** True when `owner` may make one more request now. */
  take(owner: string, now = Date.now()): boolean {
    if (this.perMinute <= 0) return true;
    const window = this.windows.get(owner);
    if (!window || now - window.start >= 60_000) {
      this.windows.set(owner, { start: now, count: 1 });
      return true;
    }
    if (window.count >= this.perMinute) return false;
    window.count += 1;
    return true;
  }
}
