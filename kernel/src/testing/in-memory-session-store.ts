import { compareText, TesseraError, type ISessionRecord, type SessionStore } from '@tessera/contracts';

/**
 * A SessionStore kept in a Map. `save` keeps its own copy of the record's arrays (messages are
 * immutable once in history, so they are shared); `load` and `list` hand out deep copies, so a
 * caller can never reach into what is stored. Saving stays cheap enough for benchmarks.
 */
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
    this.records.set(record.id, { ...record, messages: [...record.messages], history: [...record.history] });
  }

  /** A deep copy of the stored record, or `undefined`. */
  load(id: string): ISessionRecord | undefined {
    const record = this.records.get(id);
    return record && structuredClone(record);
  }

  list(): ISessionRecord[] {
    return [...this.records.values()]
      .map((record) => structuredClone(record))
      .sort((a, b) => compareText(b.updatedAt, a.updatedAt));
  }

  /** Forgets the record; an unknown id is ignored. */
  delete(id: string): void {
    this.records.delete(id);
  }
}
