import {
  BackgroundTasks,
  EditCheckpoints,
  TesseraError,
  isChatEntry,
  describeError,
  type IHistoryEntry,
  type ISessionRecord,
  type ISkillActivationEvent,
  type IToolState,
  type Message,
} from '@tessera/contracts';
import type { Session } from '../session.js';

// Module-level helpers of `InteractiveSession` and its parts: the turn result's lazy fields,
// the timeline as shown, small conversions, and the checkpoints and background tasks it reaches.
// Functions, not methods: the getters are shared by every result.

export const HISTORY_SOURCE = Symbol('history source');

export interface HistorySource {
  entries: readonly IHistoryEntry[];
  length: number;
  copy?: IHistoryEntry[];
}

/**
 * `IExecutionResult.history`: one getter shared by every result. A closure made per result
 * would give each result a hidden class of its own; V8 keeps those (and through the closure
 * the whole turn's timeline) alive until a full GC, which made every turn survive into the
 * old generation.
 */
export function resultHistory(this: { [HISTORY_SOURCE]: HistorySource }): IHistoryEntry[] {
  const source = this[HISTORY_SOURCE];
  return (source.copy ??= source.entries.slice(0, source.length).map(displayEntry));
}

export const SUMMARY_TEXT = Symbol('tool summary text');

/** A `tool-summary` entry's `summary`, made on first read; shared by every entry, as `resultHistory` is. */
export function toolSummaryText(this: { tools: readonly IToolState[]; [SUMMARY_TEXT]?: string }): string {
  return (this[SUMMARY_TEXT] ??= this.tools.map((tool) => `${tool.toolName}${tool.firstArg ? `(${tool.firstArg})` : ''}: ${tool.isRunning ? 'interrupted' : (tool.result ?? 'unknown')}`).join('\n'));
}

/** The first prompt as the user typed it (`/audit src`, not the skill body the model got), for pickers. */
export function firstPromptOf(record: ISessionRecord): string {
  const messages = record.history.length > 0 ? displayedTimeline(record.history).filter(isChatEntry).map((entry) => entry.data) : record.messages;
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const text = userText(message);
    if (text !== '') return text.split('\n', 1)[0]!.slice(0, 200);
  }
  return '';
}

/**
 * The timeline as shown: user prompts without model-only context, and a prompt's display text
 * (`/audit src`) in place of the prompt the model got. A `prompt-display` event (made when its
 * turn ended) names its prompt's user entry by how many chat entries back it stands.
 */
export function displayedTimeline(entries: readonly IHistoryEntry[]): IHistoryEntry[] {
  const shown = entries.map(displayEntry);
  let chat: number[] | undefined;
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index]!;
    if (entry.category === 'chat') {
      (chat ??= []).push(index);
      continue;
    }
    if (entry.type !== 'prompt-display') continue;
    const data = entry.data as { displayInput?: unknown; chatBack?: unknown; promptHead?: unknown } | undefined;
    if (typeof data?.displayInput !== 'string' || typeof data.chatBack !== 'number' || chat === undefined) continue;
    const target = chat[chat.length - data.chatBack];
    const user = target === undefined ? undefined : shown[target];
    // Only the entry holding that prompt (a resumed file may have dropped its turn behind a compaction summary).
    if (user === undefined || !isChatEntry(user) || user.data.role !== 'user') continue;
    if (typeof data.promptHead === 'string' && !userText(user.data).includes(data.promptHead)) continue;
    shown[target!] = { ...user, data: { ...user.data, content: data.displayInput } as Message };
  }
  return shown;
}

const REMINDER = /^<system-reminder>[\s\S]*<\/system-reminder>$/;

/** The user's own words: text blocks that are not model-only context. */
export function userText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text' && !REMINDER.test((block as { text: string }).text.trim()))
    .map((block) => block.text)
    .join('\n');
}

/** How much of a prompt a `prompt-display` event keeps, to recognise its user entry. */
export const PROMPT_HEAD_CHARS = 80;

/** A timeline entry as shown: user prompts without `<system-reminder>` context blocks. */
export function displayEntry(entry: IHistoryEntry): IHistoryEntry {
  if (!isChatEntry(entry) || entry.data.role !== 'user' || typeof entry.data.content === 'string') return entry;
  const content = entry.data.content;
  const kept = content.filter((block) => !(block.type === 'text' && REMINDER.test(block.text.trim())));
  if (kept.length === content.length) return entry;
  return { ...entry, data: { ...entry.data, content: kept } as Message };
}

/** `{ data: { code } }` for an error with a string `code`, for a failed command result. */
export function codeData(error: unknown): { data?: { code: string } } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { data: { code } } : {};
}

/** `{ code }` for an error with a string `code`, for a timeline `system` entry. */
export function codeOf(error: unknown): { code?: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { code } : {};
}

/** A skill activation as a timeline line. */
export function skillMessage(event: ISkillActivationEvent): string {
  return `Skill ${event.qualifiedName ?? event.skillName} ${event.status}${event.error ? `: ${event.error}` : ''}`;
}

/** Background task statuses after which there is nothing to stop. */
const ENDED_TASK_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** Stops this session's background shell commands that have not ended. */
export async function stopBackgroundTasks(session: Session): Promise<void> {
  const tasks = session.services.getOptional(BackgroundTasks);
  if (!tasks?.list || !tasks.stop) return;
  let open;
  try {
    // Shell commands: what `stop` reaches (subagents end with the turn that awaits them).
    open = tasks.list(session.sessionId).filter((task) => task.kind === 'process' && !ENDED_TASK_STATUSES.has(task.status));
  } catch (error) {
    session.log('error', { phase: 'background_shutdown', error: describeError(error) });
    return;
  }
  await Promise.all(
    open.map((task) =>
      tasks.stop!(task.id, session.sessionId).catch((error: unknown) => session.log('error', { phase: 'background_shutdown', taskId: task.id, error: describeError(error) })),
    ),
  );
}

/** The session's `EditCheckpoints`; throws `checkpoints_unavailable` without the checkpoints plugin. */
export function requireCheckpoints(session: Session): EditCheckpoints {
  const checkpoints = session.services.getOptional(EditCheckpoints);
  if (!checkpoints) {
    throw new TesseraError('Edit checkpoints are not enabled: add the checkpoints plugin (editCheckpoints()) to the kernel.', {
      code: 'checkpoints_unavailable',
      category: 'configuration',
      recoverable: false,
    });
  }
  return checkpoints;
}
