import { describeError, MEMORY_EVENTS_RECORD_FIELD, ProjectMemory, type ICommandResult, type MemoryKind } from '@tessera/contracts';
import { commandModulePlugin, failure, firstWord, ok, unsupported, usage } from './define-command.js';
import type { ISystemCommand, Plugin } from './types.js';

const KINDS: readonly MemoryKind[] = ['user', 'feedback', 'project', 'reference'];
const HINT = 'list | show [topic] | add <user|feedback|project|reference> <topic> <text> | pending | approve <id> | reject <id> | used';

/**
 * `/memory`: project memory through the `ProjectMemory` service. Model-invocable: the model
 * reads memory when stored context may help and saves durable facts (never secrets — the
 * service's policy refuses them). Nothing happens to memory except through this command.
 */
export const memoryCommandDefinition: ISystemCommand = {
  name: 'memory',
  description: 'List, show and add project memory; review pending entries; report what was used',
  argumentHint: HINT,
  modelInvocable: true,
  safety: 'write',
  lifecycle: 'inline',
  subcommands: ['list', 'show', 'add', 'pending', 'approve', 'reject', 'used'].map((name) => ({ name, description: `memory ${name}`, source: 'memory' })),
  async execute(context, args): Promise<ICommandResult> {
    const memory = context.services.getOptional(ProjectMemory);
    if (!memory) return unsupported('memory', 'project memory (add projectMemory())');
    restoreEvents(context, memory);
    const [sub, rest] = firstWord(args);
    try {
      switch (sub) {
        case '':
        case 'list': {
          const topics = await memory.list();
          if (topics.length === 0) return ok('No project memory yet. Add with /memory add <kind> <topic> <text>.');
          return ok(topics.map((topic) => `${topic.topic}  ${topic.entries} entr${topic.entries === 1 ? 'y' : 'ies'}`).join('\n'), { data: { topics: topics.map((topic) => topic.topic) } });
        }
        case 'show': {
          const document = await memory.show(rest === '' ? undefined : rest);
          if (!document.exists) return failure(rest === '' ? 'No memory index yet.' : `No memory topic "${rest}".`);
          memory.recordUsed([rest === '' ? { source: 'index' } : { source: 'topic', topic: rest }]);
          return ok(document.text);
        }
        case 'add': {
          const [kind, afterKind] = firstWord(rest);
          const [topic, text] = firstWord(afterKind);
          if (!KINDS.includes(kind as MemoryKind)) return usage('memory', 'add <user|feedback|project|reference> <topic> <text>', kind === '' ? 'Say what to add.' : `Unknown kind "${kind}".`);
          if (topic === '' || text === '') return usage('memory', 'add <kind> <topic> <text>', 'A topic and the text are required.');
          const added = await memory.append({ kind: kind as MemoryKind, topic, text });
          if (added.refused) return failure(`Not saved: ${added.refused.message}`);
          saveEvents(context, memory);
          return ok(added.deduplicated ? `Already in ${added.topic}.` : `Saved to ${added.topic}.`, { data: { topic: added.topic, deduplicated: added.deduplicated } });
        }
        case 'pending': {
          const pending = await memory.pending();
          if (pending.length === 0) return ok('No pending memory.');
          return ok(pending.map((candidate) => `${candidate.id}  [${candidate.kind}] ${candidate.topic}: ${candidate.text}`).join('\n'));
        }
        case 'approve':
        case 'reject': {
          if (context.invocation === 'model-tool') return failure(`Only the user can ${sub} pending memory.`);
          if (rest === '') return usage('memory', `${sub} <id>`, 'Name a pending entry (see /memory pending).');
          const decided = sub === 'approve' ? await memory.approve(rest) : await memory.reject(rest);
          saveEvents(context, memory);
          if (sub === 'approve' && decided.append?.refused) return failure(`Not saved: ${decided.append.refused.message}`);
          return ok(sub === 'approve' ? `Approved and saved to ${decided.candidate.topic}.` : `Rejected ${decided.candidate.id}.`);
        }
        case 'used': {
          const used = memory.used();
          if (used.length === 0) return ok('No memory was used in this session yet.');
          return ok(used.map((reference) => `${reference.source}${reference.topic ? ` ${reference.topic}` : ''}${reference.entry ? `: ${reference.entry}` : ''}`).join('\n'));
        }
        default:
          return usage('memory', HINT, `Unknown subcommand "${sub}".`);
      }
    } catch (error) {
      return failure(describeError(error));
    }
  },
};

type RecordAdapter = { get?: (field: string) => unknown; set?: (field: string, value: unknown) => void };

/** A resumed session's memory events come back from its record the first time memory is used. */
function restoreEvents(context: Parameters<ISystemCommand['execute']>[0], memory: ProjectMemory): void {
  if (memory.events().length > 0) return;
  const stored = (context.getCommandHostAdapters().sessionRecord as RecordAdapter | undefined)?.get?.(MEMORY_EVENTS_RECORD_FIELD);
  if (Array.isArray(stored) && stored.length > 0) memory.restore({ events: stored });
}

/** Memory events go into the session record (`memoryEvents`) when the host lets commands set fields. */
function saveEvents(context: Parameters<ISystemCommand['execute']>[0], memory: ProjectMemory): void {
  const record = context.getCommandHostAdapters().sessionRecord as RecordAdapter | undefined;
  record?.set?.(MEMORY_EVENTS_RECORD_FIELD, memory.events());
}

export const memoryCommand = (): Plugin =>
  commandModulePlugin(
    'memory',
    [memoryCommandDefinition],
    [
      {
        name: 'memory',
        description: 'Project memory: durable facts about this project and how the user works, kept in .tessera/memory.',
        usage: 'Read it ("list", "show <topic>") when stored context may help. Save ("add <user|feedback|project|reference> <topic> <text>") only durable, reusable facts — never secrets, keys or personal data.',
        argumentHint: HINT,
        safety: 'write',
      },
    ],
  );
