import type { Stats } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { IPromptFileReferenceRecord, PermissionVerdict } from '@tessera/contracts';
import { insideDirectories, realPathNearest } from '@tessera/permission-rules';
import { findReferenceTokens, type ReferenceToken } from './reference-tokens.js';

export const DEFAULT_MAX_FILE_BYTES = 256 * 1024;
export const DEFAULT_MAX_TOTAL_BYTES = 1024 * 1024;
export const DEFAULT_MAX_DEPTH = 3;

export type PromptFileReferenceFailureKind = 'missing' | 'outside_root' | 'denied' | 'directory' | 'circular' | 'max_depth' | 'size_limit';

/** One reference that could not be included. Any failure blocks the prompt. */
export interface PromptFileReferenceFailure {
  /** The reference as written (`@docs/spec.md`). */
  reference: string;
  kind: PromptFileReferenceFailureKind;
  /** What went wrong and what to do about it. */
  message: string;
  /** The absolute path the reference resolved to. */
  path: string;
  /** For a nested reference: the relative path of the file it was written in. */
  referencedFrom?: string;
}

export interface PromptFileReferenceLimits {
  /** Extra directories references may point into, besides `cwd` (relative ones resolve against `cwd`). */
  roots?: readonly string[];
  /** Largest file that may be included, in bytes. Default 256 KiB. */
  maxFileBytes?: number;
  /** Largest sum of included files, in bytes. Default 1 MiB. */
  maxTotalBytes?: number;
  /** How deep references inside referenced files are followed (the prompt's own are depth 0). Default 3. */
  maxDepth?: number;
}

export interface PromptFileReferenceOptions extends PromptFileReferenceLimits {
  /** The session's working directory: the first root, and what the prompt's references resolve against. */
  cwd: string;
  /**
   * How a `Read` of an absolute path would be decided for this session (the plugin asks the
   * session's `PermissionPolicy`). Asked for every reference before its file is read: `deny`
   * fails the reference; `approve` (an ask rule) fails a nested one only, since nobody is asked
   * in the middle of resolving a prompt while the prompt's own references are the user's
   * request. Default: every read is allowed.
   */
  checkRead?: (absolutePath: string) => PermissionVerdict | Promise<PermissionVerdict>;
}

export interface PromptFileReferenceResolution {
  /** One model-only context block per included file, in the order the files were found. */
  blocks: string[];
  /** What was included, without contents (for the `prompt_file_reference` event). */
  records: IPromptFileReferenceRecord[];
  failures: PromptFileReferenceFailure[];
}

interface Root {
  /** As configured, resolved against `cwd`. */
  path: string;
  /** Its real path. */
  real: string;
}

/** Where a piece of text with references in it came from. */
interface Origin {
  /** What relative references in it resolve against. */
  directory: string;
  depth: number;
  /** Real paths of the files being included around it, outermost first (for cycles). */
  ancestors: readonly string[];
  /** The referencing file, for a nested reference. */
  from?: IPromptFileReferenceRecord;
}

/**
 * Finds the `@` references in `prompt` (see `findReferenceTokens` for what counts), reads each
 * file and, to `maxDepth`, the files they reference in turn. A nested reference resolves
 * against the directory of the file it is written in. Each file is included once.
 *
 * A reference must resolve, lexically and after symbolic links, inside `cwd` or one of
 * `roots`. Nothing outside them is read or even looked at. A file `checkRead` refuses is not
 * read either. The caller decides what failures mean; the plugin blocks the prompt on any.
 */
export async function resolvePromptFileReferences(prompt: string, options: PromptFileReferenceOptions): Promise<PromptFileReferenceResolution> {
  const cwd = resolve(options.cwd);
  return new ReferenceWalk(cwd, {
    roots: [cwd, ...(options.roots ?? []).map((root) => resolve(cwd, root))],
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    maxTotalBytes: options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    ...(options.checkRead ? { checkRead: options.checkRead } : {}),
  }).run(prompt);
}

interface WalkLimits {
  roots: readonly string[];
  maxFileBytes: number;
  maxTotalBytes: number;
  maxDepth: number;
  checkRead?: PromptFileReferenceOptions['checkRead'];
}

/** One resolution: the state a walk over the references of one prompt keeps. */
class ReferenceWalk {
  private readonly roots: Root[];
  private readonly included = new Set<string>();
  /** The prompt's own references, resolved against `cwd`: the files the user asked for by name. */
  private explicit = new Set<string>();
  private totalBytes = 0;
  private readonly result: PromptFileReferenceResolution = { blocks: [], records: [], failures: [] };

  constructor(
    private readonly cwd: string,
    private readonly limits: WalkLimits,
  ) {
    this.roots = limits.roots.map((path) => ({ path, real: realPathNearest(path) }));
  }

  async run(prompt: string): Promise<PromptFileReferenceResolution> {
    this.explicit = new Set(findReferenceTokens(prompt).map((token) => resolve(this.cwd, token.path)));
    await this.visit(prompt, { directory: this.cwd, depth: 0, ancestors: [] });
    return this.result;
  }

  private async visit(text: string, origin: Origin): Promise<void> {
    for (const token of findReferenceTokens(text)) await this.include(token, origin);
  }

  private async include(token: ReferenceToken, origin: Origin): Promise<void> {
    const path = resolve(origin.directory, token.path);
    const fail = (kind: PromptFileReferenceFailureKind, message: string): void => {
      this.result.failures.push({
        reference: token.original,
        kind,
        message,
        path,
        ...(origin.from ? { referencedFrom: origin.from.relativePath } : {}),
      });
    };
    const rootPaths = this.roots.map((root) => root.path);
    const lexicallyInside = insideDirectories([path], rootPaths, this.cwd);
    // A bare `@word` is a reference only when there is a file by that name; no name outside
    // the roots is looked up to find out.
    if (token.form === 'word' && !(lexicallyInside && (await isFile(path)))) return;
    // A package name (`@types/node`, `@tessera/kernel` in "upgrade @types/node") has the shape of
    // a path but is not one: an unquoted path with no file extension, not written as a path
    // (`./`, `../`, `/`, `~/`), whose first folder does not exist here, is left alone as text.
    if (token.form === 'path' && !(await looksLikeFile(token.path, origin.directory))) return;
    if (!lexicallyInside) return fail('outside_root', `${this.show(path)} is outside the workspace (${this.rootList()}). Only files inside it can be referenced: copy the file in, or add its directory to the roots option.`);

    let real: string;
    try {
      real = await realpath(path);
    } catch (error) {
      const base = origin.directory === this.cwd ? `the working directory (${this.cwd})` : `the directory of ${origin.from?.relativePath ?? this.show(origin.directory)}`;
      return fail('missing', `${this.show(path)} does not exist${describeCode(error)}. Check the spelling; the path is resolved against ${base}.`);
    }
    const root = this.roots.find((candidate) => insideDirectories([real], [candidate.real], this.cwd));
    if (!root) return fail('outside_root', `${this.show(path)} is a symbolic link to ${real}, outside the workspace (${this.rootList()}). Reference a file inside the workspace instead.`);
    const refusal = await this.readRefusal(path, real, origin);
    if (refusal !== undefined) return fail('denied', refusal);
    if (origin.ancestors.includes(real)) {
      const chain = [...origin.ancestors, real].map((ancestor) => this.show(ancestor)).join(' → ');
      return fail('circular', `${this.show(real)} is already being included further up (${chain}). Remove one of the references that form the cycle.`);
    }
    if (this.included.has(real)) return;
    if (origin.depth > this.limits.maxDepth) {
      return fail('max_depth', `${this.show(real)} is referenced at depth ${origin.depth}, past maxDepth ${this.limits.maxDepth} (the prompt's own references are depth 0). Reference it in the prompt ahead of the file that nests it, or raise maxDepth.`);
    }

    let info: Stats;
    let content: Buffer;
    try {
      info = await stat(real);
    } catch (error) {
      return fail('missing', unreadable(this.show(real), error));
    }
    if (info.isDirectory()) return fail('directory', `${this.show(real)} is a directory. Reference the files in it that you need instead.`);
    if (!info.isFile()) return fail('missing', `${this.show(real)} is not a regular file (a device, socket or pipe) and cannot be included.`);
    if (info.size > this.limits.maxFileBytes) return fail('size_limit', this.tooLarge(real, info.size));
    if (this.totalBytes + info.size > this.limits.maxTotalBytes) return fail('size_limit', this.overTotal(real, info.size));

    try {
      content = await readFile(real);
    } catch (error) {
      return fail('missing', unreadable(this.show(real), error));
    }
    // The file may have grown since `stat`.
    if (content.byteLength > this.limits.maxFileBytes) return fail('size_limit', this.tooLarge(real, content.byteLength));
    if (this.totalBytes + content.byteLength > this.limits.maxTotalBytes) return fail('size_limit', this.overTotal(real, content.byteLength));
    this.totalBytes += content.byteLength;
    this.included.add(real);

    const record: IPromptFileReferenceRecord = {
      sourcePath: real,
      relativePath: toSlashes(relative(root.real, real)),
      originalReference: token.original,
      reason: origin.depth === 0 ? 'prompt' : 'nested',
      depth: origin.depth,
      byteLength: content.byteLength,
    };
    const text = content.toString('utf8');
    this.result.records.push(record);
    this.result.blocks.push(contextBlock(record, text, root.path === this.cwd ? undefined : root.path, origin.from));
    // Nested references are read from prose only: an `@` in code (`import … from '@scope/pkg'`,
    // a decorator, an npm script) is not a reference, so source files are included as they are.
    if (NESTING_FILES.test(real)) await this.visit(text, { directory: dirname(real), depth: origin.depth + 1, ancestors: [...origin.ancestors, real], from: record });
  }

  /**
   * Why the permission rules keep this file from the model, or undefined when they do not.
   * Both the path as written and its real path are judged, as the Read tool's rules see
   * through links; the stricter verdict counts.
   */
  private async readRefusal(path: string, real: string, origin: Origin): Promise<string | undefined> {
    const checkRead = this.limits.checkRead;
    if (checkRead === undefined) return undefined;
    let verdict: PermissionVerdict | undefined;
    try {
      for (const candidate of real === path ? [path] : [path, real]) {
        const next = await checkRead(candidate);
        if (verdict === undefined || STRICTNESS[next.decision] > STRICTNESS[verdict.decision]) verdict = next;
      }
    } catch (error) {
      return `${this.show(path)} could not be checked against the permission rules (${error instanceof Error ? error.message : String(error)}), so it was not included. Try again, or remove the reference.`;
    }
    if (verdict === undefined || verdict.decision === 'auto') return undefined;
    const by = verdict.rule === undefined ? 'the permission policy' : `the permission rule ${verdict.rule}`;
    const why = verdict.reason === undefined ? '' : ` (${verdict.reason})`;
    if (verdict.decision === 'deny') {
      return `${this.show(path)} may not be read: ${by} denies it${why}, so it is not sent to the model. Remove the reference, or change the rule if the file may be shared.`;
    }
    // An ask rule: the user's own reference is their answer (also when a file they include
    // names the same file first); one found only inside a file is not.
    if (origin.depth === 0 || this.explicit.has(path) || this.explicit.has(real)) return undefined;
    return `${this.show(path)} needs approval to be read under ${by}${why}, and references found inside files are not asked about. Reference it in the prompt yourself to include it, or remove it from ${origin.from?.relativePath ?? 'the file'}.`;
  }

  /** A path as a person reads it: relative to the working directory when inside it. */
  private show(path: string): string {
    const inCwd = relative(this.cwd, path);
    return inCwd !== '' && !inCwd.startsWith('..') && !isAbsolute(inCwd) ? toSlashes(inCwd) : path;
  }

  private rootList(): string {
    return this.roots.map((root) => root.path).join(', ');
  }

  private tooLarge(path: string, bytes: number): string {
    return `${this.show(path)} is ${bytes} bytes, over the ${this.limits.maxFileBytes}-byte limit per file. Reference a smaller file or an excerpt, or raise maxFileBytes.`;
  }

  private overTotal(path: string, bytes: number): string {
    return `${this.show(path)} (${bytes} bytes) would bring the referenced files to ${this.totalBytes + bytes} bytes, over the ${this.limits.maxTotalBytes}-byte total limit. Reference fewer files, or raise maxTotalBytes.`;
  }
}

/**
 * The model sees each file once, named by its path, between `<file>` tags; the contents are
 * never rewritten into the prompt itself.
 */
function contextBlock(record: IPromptFileReferenceRecord, text: string, root: string | undefined, from: IPromptFileReferenceRecord | undefined): string {
  const who = from ? `${from.relativePath} references` : 'The user referenced';
  const rootAttribute = root === undefined ? '' : ` root="${root}"`;
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return `${who} ${record.originalReference}. Contents of ${record.relativePath}:\n<file path="${record.relativePath}"${rootAttribute}>\n${body}</file>`;
}

/** How strict each permission decision is, to keep the stricter of two. */
const STRICTNESS: Record<PermissionVerdict['decision'], number> = { auto: 0, approve: 1, deny: 2 };

/** Files whose own `@` references are followed: Markdown and plain text. */
const NESTING_FILES = /\.(md|markdown|mdx|txt)$/i;
const EXPLICIT_PATH = /^(\.{1,2}\/|\/|~\/)/;
const FILE_EXTENSION = /\.[A-Za-z0-9]{1,10}$/;

/**
 * An unquoted `@path` token is a file reference when it is written as a path, ends with a file
 * extension, or starts with a folder (or file) that exists in `directory`.
 */
async function looksLikeFile(path: string, directory: string): Promise<boolean> {
  if (EXPLICIT_PATH.test(path) || FILE_EXTENSION.test(path.replace(/\/+$/, ''))) return true;
  const first = path.split('/')[0]!;
  try {
    await stat(resolve(directory, first));
    return true;
  } catch {
    return false;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function describeCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || code === 'ENOENT') return '';
  if (code === 'ENOTDIR') return ' (a part of the path is a file, not a directory)';
  if (code === 'ELOOP') return ' (its symbolic links form a loop)';
  return ` (${code})`;
}

function unreadable(path: string, error: unknown): string {
  return `${path} could not be read${describeCode(error)}. Check that it exists and that you may read it.`;
}

function toSlashes(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}
