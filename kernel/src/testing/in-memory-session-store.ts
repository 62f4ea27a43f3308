import { TesseraError, type ISessionRecord, type SessionStore } from '@tessera/contracts';

/** A SessionStore kept in a Map. Records are deep-copied in and out, as a file store would. */
export class InMemorySessionStore implements SessionStore {
  private readonly records = new Map<string, ISessionRecord>();

  save(record: ISessionRecord): void {
    if (typeof record.id !== 'string' || record.id === '') {
      throw new TesseraError('Cannot save a session record without an id.', {
        code: 'invalid_session_record',
        category: 'validation',
        recoverable: false,
      });
    }
    this.records.set(record.id, structuredClone(record));
  }

  load(id: string): ISessionRecord | undefined {
    const record = this.records.get(id);
    return record && structuredClone(record);
  }

  list(): ISessionRecord[] {
    return [...this.records.values()]
      .map((record) => structuredClone(record))
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  delete(id: string): void {
    this.records.delete(id);
  }
}
