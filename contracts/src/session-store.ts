import type { IHistoryEntry } from './history.js';
import type { Message } from './message.js';
import { createToken } from './token.js';
import type { ToolSchema } from './tool.js';

/** A persisted session (spec: ISessionRecord). Unknown fields are kept by stores. */
export interface ISessionRecord {
  id: string;
  cwd: string;
  name?: string;
  createdAt: string;
  updatedAt: string;
  messages: Message[];
  history: IHistoryEntry[];
  systemPrompt?: string;
  toolSchemas?: ToolSchema[];
  [extension: string]: unknown;
}

/** Persistence port for session records. Methods may be sync or async. */
export interface SessionStore {
  save(record: ISessionRecord): void | Promise<void>;
  load(id: string): ISessionRecord | undefined | Promise<ISessionRecord | undefined>;
  /** Newest `updatedAt` first. */
  list(): ISessionRecord[] | Promise<ISessionRecord[]>;
  delete(id: string): void | Promise<void>;
}

export const SessionStore = createToken<SessionStore>('SessionStore');
