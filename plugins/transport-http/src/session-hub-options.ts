import type { ApprovalRouter, SessionCluster, SessionFactory } from '@tessera/session-hub';

/** What a `SessionHub` serves and how: the sessions it opens, where they may work, and the per-token limits. */
export interface SessionHubOptions {
  sessions: SessionFactory;
  /** The router the kernel's `ApprovalHandler` is; the hub routes each session's asks to its clients. */
  approvals: ApprovalRouter;
  /** Sessions may only work inside these folders (absolute). */
  allowedRoots: readonly string[];
  /** A session created without `cwd` works here (default: the first root). */
  defaultCwd?: string;
  /** A permission ask nobody answers is denied after this long. Default 60 s. */
  permissionTimeoutMs?: number;
  /** Whether a client may ask for `bypassPermissions`. Default false. */
  allowBypassPermissions?: boolean;
  /** Live sessions per owner. Default 100. */
  maxSessionsPerOwner?: number;
  /** Turns running at once per owner. Default 4. */
  maxConcurrentTurnsPerOwner?: number;
  /** Turns `owner` runs through another transport of this host (MCP at `/mcp`): they count against the same limit. */
  externalTurns?: (owner: string) => number;
  /** Record field holding the owning token's id in stored sessions. */
  ownerField?: string;
  /**
   * Replica mode: several server processes serve the same stored sessions (the store and this
   * cluster are shared, e.g. `redisSessionStore()`). A session not live here is loaded from the
   * store on first use (by its owner only); a turn takes the session's cluster lock, reopens a
   * copy another replica saved over, and publishes its parts so other replicas can stream it;
   * abort and permission answers sent to another replica are forwarded to the one running it.
   */
  cluster?: SessionCluster;
  /**
   * Lets clients run host commands (`scope: 'host'`: `/plugin`, `/reload-plugins`, `/reset`).
   * Default false: they are refused (`command_not_allowed`, 403), because one token must not
   * change what every other token's sessions run. Only for a host whose clients are all trusted.
   */
  allowHostCommands?: boolean;
}
