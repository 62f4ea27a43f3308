import type { InteractiveSession } from '@tessera/kernel';

/** Drops the conversation from the last prompt starting with `prompt`; the entries kept, or undefined. */
export function rewindConversation(interactive: InteractiveSession, prompt: string): number | undefined {
  const session = interactive.getSession();
  const entries = session.getFullHistory();
  const head = prompt.split('\n')[0]!.trim();
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index]!;
    if (entry.category !== 'chat') continue;
    const message = entry.data as { role?: string; content?: unknown };
    if (message.role !== 'user') continue;
    const text = typeof message.content === 'string' ? message.content : Array.isArray(message.content) ? message.content.map((block: { text?: string }) => block.text ?? '').join('') : '';
    if (text.trim().startsWith(head)) {
      session.truncateHistory(index);
      return index;
    }
  }
  return undefined;
}

/** How long ago an ISO time was, in a picker's words ("just now", "5m ago", "3d ago"). */
export function age(iso: string): string {
  const ms = Date.now() - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  if (ms < 60_000) return 'just now';
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)}h ago`;
  return `${Math.round(ms / 86_400_000)}d ago`;
}
