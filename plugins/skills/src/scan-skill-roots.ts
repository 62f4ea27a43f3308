import { closeSync, fstatSync, openSync, readdirSync, readFileSync, statSync, type Dirent, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Diagnostic, SkillEntry } from '@tessera/contracts';
import { readCommandFile, readSkillFile } from '@tessera/formats';
import { quickListing } from './quick-listing.js';

/** One folder skills are found in: `skill-dirs` holds `*\/SKILL.md`, `commands` holds `**\/*.md`. */
export interface SkillRoot {
  readonly path: string;
  readonly layout: 'skill-dirs' | 'commands';
  /** `SkillEntry.source`: `project` or `user`. */
  readonly source: 'project' | 'user';
}

/**
 * The folders scanned, highest precedence first (`.robota` in the spec is `.tessera` here).
 * A root listed twice (cwd is the home folder) is scanned once.
 */
export function skillRoots(cwd: string, home: string): SkillRoot[] {
  const roots: SkillRoot[] = [
    { path: join(cwd, '.tessera', 'skills'), layout: 'skill-dirs', source: 'project' },
    { path: join(cwd, '.agents', 'skills'), layout: 'skill-dirs', source: 'project' },
    { path: join(cwd, '.claude', 'skills'), layout: 'skill-dirs', source: 'project' },
    { path: join(cwd, '.claude', 'commands'), layout: 'commands', source: 'project' },
    { path: join(home, '.tessera', 'skills'), layout: 'skill-dirs', source: 'user' },
    { path: join(home, '.claude', 'skills'), layout: 'skill-dirs', source: 'user' },
  ];
  const seen = new Set<string>();
  return roots.filter((root) => {
    const key = resolve(root.path);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A skill found by the scan, with the frontmatter findings of its file (none above `info` when the quick reader read it). */
export interface ScannedSkill {
  readonly entry: SkillEntry;
  readonly diagnostics: readonly Diagnostic[];
}

/** A second file with a name already taken; the first (higher precedence) one is kept. */
export interface SkillDuplicate {
  readonly id: string;
  readonly kept: string;
  readonly dropped: string;
}

export interface SkillScan {
  readonly skills: readonly ScannedSkill[];
  readonly duplicates: readonly SkillDuplicate[];
  /** Files that could not be used (unreadable), with why. */
  readonly skipped: readonly ScannedSkill[];
  /**
   * Every path whose `stampOf` decides whether the scan is still current: each root (missing
   * ones too), every file read, every commands sub-folder, and every skill folder that had no
   * SKILL.md (a skill folder with one is covered by the file and by its root).
   */
  readonly watched: readonly string[];
  /** `stampOf` each `watched` path when it was scanned, in order. */
  readonly stamps: readonly string[];
}

/** Modification time and size (an edit within the time resolution still shows); '' when missing. */
export function stampOf(stats: Stats | undefined): string {
  return stats === undefined ? '' : `${stats.mtimeMs}:${stats.size}`;
}

export function stampPath(path: string): string {
  return stampOf(statSync(path, { throwIfNoEntry: false }));
}

/**
 * Reads every skill under `roots`. Synchronous on purpose: the files are small, the scan runs
 * once per cwd, and a synchronous pass keeps the cache free of half-finished states.
 * Never throws on bad content; a file is skipped only when Claude Code would skip it
 * (an `error` finding, i.e. unreadable).
 */
export function scanSkillRoots(roots: readonly SkillRoot[]): SkillScan {
  const skills: ScannedSkill[] = [];
  const skipped: ScannedSkill[] = [];
  const duplicates: SkillDuplicate[] = [];
  const watched: string[] = [];
  const stamps: string[] = [];
  const watch = (path: string, stamp: string): void => {
    watched.push(path);
    stamps.push(stamp);
  };
  const byId = new Map<string, string>();

  const add = (found: ScannedSkill): void => {
    if (found.diagnostics.some((diagnostic) => diagnostic.severity === 'error')) {
      skipped.push(found);
      return;
    }
    const file = found.entry.file!;
    const kept = byId.get(found.entry.id);
    if (kept !== undefined) {
      duplicates.push({ id: found.entry.id, kept, dropped: file });
      return;
    }
    byId.set(found.entry.id, file);
    skills.push(found);
  };

  for (const root of roots) {
    // Stamped before it is read: a change during the scan shows at the next check.
    watch(root.path, stampPath(root.path));
    if (root.layout === 'skill-dirs') {
      for (const name of directoryNames(root.path)) {
        const dir = join(root.path, name);
        const file = join(dir, 'SKILL.md');
        const read = readStamped(file);
        if (read === undefined) {
          watch(dir, stampPath(dir));
          continue;
        }
        watch(file, read.stamp);
        add(entryFromFile('skill', file, read.text, root.source));
      }
    } else {
      for (const file of commandFiles(root.path, watch)) {
        const read = readStamped(file);
        if (read === undefined) continue;
        watch(file, read.stamp);
        add(entryFromFile('command', file, read.text, root.source));
      }
    }
  }
  return { skills, duplicates, skipped, watched, stamps };
}

/** The file's text and stamp from one open (no separate stat); undefined when it is not a readable file. */
function readStamped(path: string): { text: string; stamp: string } | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) return undefined;
    return { text: readFileSync(descriptor, 'utf8'), stamp: stampOf(stats) };
  } catch {
    return undefined;
  } finally {
    closeSync(descriptor);
  }
}

/** A listing entry: the quick frontmatter path when it applies, else the full reader. */
function entryFromFile(kind: 'skill' | 'command', file: string, text: string, source: string): ScannedSkill {
  const quick = quickListing(file, text, kind, source);
  if (quick !== undefined) return { entry: quick, diagnostics: [] };
  const { value, diagnostics } = kind === 'skill' ? readSkillFile(file) : readCommandFile(file);
  return {
    entry: {
      id: kind === 'skill' ? (value as ReturnType<typeof readSkillFile>['value']).id : value.name,
      name: value.name,
      description: value.description,
      source,
      file: value.file,
      ...(value.argumentHint === undefined ? {} : { argumentHint: value.argumentHint }),
      userInvocable: value.userInvocable,
      modelInvocable: !value.disableModelInvocation,
    },
    diagnostics,
  };
}

/** Sub-folder names (symlinks to folders included), sorted so precedence inside a root is stable. */
function directoryNames(path: string): string[] {
  return entries(path)
    .filter((entry) => entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(join(path, entry.name))))
    .map((entry) => entry.name)
    .sort();
}

/** `**\/*.md` under a commands folder, depth first in sorted order; every sub-folder entered is watched. */
function commandFiles(root: string, watch: (path: string, stamp: string) => void): string[] {
  const files: string[] = [];
  const walk = (dir: string, depth: number): void => {
    const found = entries(dir).sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of found) {
      const path = join(dir, entry.name);
      const directory = entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(path));
      if (directory) {
        // A cycle of symlinks cannot loop forever.
        if (depth >= 8) continue;
        watch(path, stampPath(path));
        walk(path, depth + 1);
      } else if (entry.name.toLowerCase().endsWith('.md')) {
        files.push(path);
      }
    }
  };
  walk(root, 0);
  return files;
}

function entries(path: string): Dirent[] {
  try {
    return readdirSync(path, { withFileTypes: true });
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
