import {
  DEFAULT_MEMORY_STARTUP_CAPS,
  type MemoryDocument,
  type MemoryEntryInput,
  type MemoryKind,
  type MemoryRefusal,
  type MemoryStartupCaps,
  type MemoryStartupIndex,
  type MemoryTopicSummary,
} from '@tessera/contracts';
import { appendFile, mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readTextIfExists } from './atomic-write.js';
import type { MemoryPolicyEvaluator } from './memory-policy-evaluator.js';
import { formatEntryLine, normalizeEntry, parseEntryLines, validateEntry, validateTopic } from './memory-text.js';

/** Where project memory lives, relative to the project root. */
export const MEMORY_DIRECTORY = '.tessera/memory';
export const MEMORY_INDEX_FILE = 'MEMORY.md';
export const MEMORY_TOPICS_DIRECTORY = 'topics';

const INDEX_HEADER = '# Project Memory\n\n';

export interface ProjectMemoryStoreOptions {
  /** The project root; memory goes to `<root>/.tessera/memory`. */
  readonly root: string;
  readonly policy: MemoryPolicyEvaluator;
}

export interface StoreAppendResult {
  readonly kind: MemoryKind;
  readonly topic: string;
  readonly text: string;
  readonly deduplicated: boolean;
  readonly refused?: MemoryRefusal;
}

/**
 * The files of project memory: `MEMORY.md` (the index, one `- [kind] topic: text` line per
 * entry, the part the system prompt shows) and `topics/<topic>.md` (the entries of one topic).
 * Both are appended to, never rewritten, so a person's own edits survive. Topics are validated
 * before any path is built.
 */
export class ProjectMemoryStore {
  readonly directory: string;
  readonly indexPath: string;
  private readonly topicsDirectory: string;

  constructor(private readonly options: ProjectMemoryStoreOptions) {
    this.directory = join(options.root, MEMORY_DIRECTORY);
    this.indexPath = join(this.directory, MEMORY_INDEX_FILE);
    this.topicsDirectory = join(this.directory, MEMORY_TOPICS_DIRECTORY);
  }

  topicPath(topic: string): string {
    return join(this.topicsDirectory, `${validateTopic(topic)}.md`);
  }

  async list(): Promise<MemoryTopicSummary[]> {
    let names: string[];
    try {
      names = await readdir(this.topicsDirectory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const topics: MemoryTopicSummary[] = [];
    for (const name of names.filter((file) => file.endsWith('.md')).sort()) {
      const topic = name.slice(0, -3);
      const path = join(this.topicsDirectory, name);
      const text = await readFile(path, 'utf8');
      topics.push({ topic, path, bytes: Buffer.byteLength(text), entries: parseEntryLines(text).length });
    }
    return topics;
  }

  async show(topic?: string): Promise<MemoryDocument> {
    const path = topic === undefined ? this.indexPath : this.topicPath(topic);
    const text = await readTextIfExists(() => readFile(path, 'utf8'));
    return { ...(topic === undefined ? {} : { topic: validateTopic(topic) }), path, text: text ?? '', exists: text !== undefined };
  }

  /** True when the topic already holds the entry in normalised form. */
  async contains(topic: string, text: string): Promise<boolean> {
    const existing = await readTextIfExists(() => readFile(this.topicPath(topic), 'utf8'));
    if (existing === undefined) return false;
    const wanted = normalizeEntry(text);
    return parseEntryLines(existing).some((entry) => normalizeEntry(entry.text) === wanted);
  }

  /** Policy, then deduplication, then one line in the topic file and one in the index. */
  async append(input: MemoryEntryInput): Promise<StoreAppendResult> {
    const { kind, topic, text } = validateEntry(input);
    const decision = this.options.policy.evaluate(`${topic} ${text}`);
    if (!decision.allowed) {
      const { kind: refusedKind, label, message } = decision;
      return { kind, topic, text, deduplicated: false, refused: { kind: refusedKind, label, message } };
    }
    if (await this.contains(topic, text)) return { kind, topic, text, deduplicated: true };
    await mkdir(this.topicsDirectory, { recursive: true });
    const topicPath = this.topicPath(topic);
    const topicText = await readTextIfExists(() => readFile(topicPath, 'utf8'));
    await appendFile(topicPath, `${topicText === undefined ? `# ${topic}\n\n` : separator(topicText)}${formatEntryLine(kind, text)}\n`, 'utf8');
    const indexText = await readTextIfExists(() => readFile(this.indexPath, 'utf8'));
    await appendFile(this.indexPath, `${indexText === undefined ? INDEX_HEADER : separator(indexText)}- [${kind}] ${topic}: ${text}\n`, 'utf8');
    return { kind, topic, text, deduplicated: false };
  }

  /**
   * The start of MEMORY.md: the first `maxLines` lines, then cut to `maxBytes` at a line end
   * (or at a character boundary when one line alone is too long).
   */
  async startupIndex(caps: Partial<MemoryStartupCaps> = {}): Promise<MemoryStartupIndex> {
    const { maxLines, maxBytes } = { ...DEFAULT_MEMORY_STARTUP_CAPS, ...caps };
    const file = await readTextIfExists(() => readFile(this.indexPath, 'utf8'));
    const whole = (file ?? '').replace(/\r\n/g, '\n').replace(/\n+$/, '');
    if (whole.trim() === '') return { path: this.indexPath, text: '', truncated: false, lines: 0, bytes: 0, totalLines: 0, totalBytes: Buffer.byteLength(file ?? '') };
    const allLines = whole.split('\n');
    let text = allLines.slice(0, maxLines).join('\n');
    let truncated = allLines.length > maxLines;
    if (Buffer.byteLength(text) > maxBytes) {
      truncated = true;
      const cut = Buffer.from(text).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
      const lastNewline = cut.lastIndexOf('\n');
      text = lastNewline > 0 ? cut.slice(0, lastNewline) : cut;
    }
    return {
      path: this.indexPath,
      text,
      truncated,
      lines: text === '' ? 0 : text.split('\n').length,
      bytes: Buffer.byteLength(text),
      totalLines: allLines.length,
      totalBytes: Buffer.byteLength(file ?? ''),
    };
  }
}

/** A newline first when a person left the file without one at the end. */
function separator(text: string): string {
  return text === '' || text.endsWith('\n') ? '' : '\n';
}
