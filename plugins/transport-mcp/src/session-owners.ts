/**
 * Which MCP connection holds each live session, across every connection of one transport: a
 * session belongs to the connection that opened (or resumed) it until that connection closes,
 * and no other connection can reach it.
 */
export class SessionOwners {
  private readonly owners = new Map<string, object>();

  /** Takes `sessionId` for `owner`; false when another owner holds it. */
  claim(sessionId: string, owner: object): boolean {
    const current = this.owners.get(sessionId);
    if (current !== undefined && current !== owner) return false;
    this.owners.set(sessionId, owner);
    return true;
  }

  release(sessionId: string, owner: object): void {
    if (this.owners.get(sessionId) === owner) this.owners.delete(sessionId);
  }

  get size(): number {
    return this.owners.size;
  }
}
