import { resolve } from 'node:path';
import { diagnosticReport, type DiagnosticsReporter, type SkillEntry, type SkillSource } from '@tessera/contracts';
import { scanSkillRoots, skillRoots, stampPath, type SkillRoot, type SkillScan } from './scan-skill-roots.js';

export interface FolderSkillSourceOptions {
  /** The user folder holding `.tessera/skills` and `.claude/skills`. */
  readonly home: string;
  /** Only the folders of these sources are scanned (`project` / `user`; see `skillRoots`). Default: all. */
  readonly sources?: ReadonlyArray<SkillRoot['source']>;
  /** Where findings go; nothing is reported without one. */
  readonly diagnostics?: DiagnosticsReporter;
}

const SOURCE = 'skills';

interface Snapshot {
  readonly scan: SkillScan;
  readonly entries: readonly SkillEntry[];
}

/**
 * Skills from the project and user folders (`.tessera`, `.agents`, `.claude`; see
 * `skillRoots`). Scanned once per cwd and cached. Each `skills()` call re-checks the
 * modification times of the folders and files the scan looked at (a few hundred `stat`s for
 * a thousand skills, well under the cost of a scan) and rescans when one differs, then tells
 * the `onChange` listeners. No file watchers: nothing to close, and it works on file systems
 * where `fs.watch` does not (network and container mounts).
 */
export class FolderSkillSource implements SkillSource {
  readonly name = 'folders';
  private readonly snapshots = new Map<string, Snapshot>();
  private listeners: ReadonlyArray<() => void> = [];

  constructor(private readonly options: FolderSkillSourceOptions) {}

  skills(session: { readonly sessionId: string; readonly cwd: string }): readonly SkillEntry[] {
    const cwd = resolve(session.cwd);
    const cached = this.snapshots.get(cwd);
    if (cached !== undefined && current(cached)) return cached.entries;
    const snapshot = this.discover(cwd);
    this.snapshots.set(cwd, snapshot);
    if (cached !== undefined) this.notify();
    return snapshot.entries;
  }

  onChange(listener: () => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  /** Forgets every cached scan (the next `skills()` call rescans). */
  invalidate(): void {
    this.snapshots.clear();
  }

  private discover(cwd: string): Snapshot {
    const { sources } = this.options;
    const roots = skillRoots(cwd, this.options.home).filter((root) => sources === undefined || sources.includes(root.source));
    const scan = scanSkillRoots(roots);
    this.report(scan);
    return { scan, entries: scan.skills.map((skill) => skill.entry) };
  }

  /** Warnings and errors only: infos (a `version` key, a dotted name) are nothing to fix. */
  private report(scan: SkillScan): void {
    const reporter = this.options.diagnostics;
    if (reporter === undefined) return;
    for (const found of [...scan.skills, ...scan.skipped]) {
      for (const diagnostic of found.diagnostics) {
        if (diagnostic.severity === 'info') continue;
        reporter.report(diagnosticReport(diagnostic, 'TESSERA_SKILL_FILE', SOURCE));
      }
    }
    for (const duplicate of scan.duplicates) {
      reporter.report({
        severity: 'warning',
        code: 'TESSERA_SKILL_DUPLICATE',
        source: SOURCE,
        file: duplicate.dropped,
        message: `Skill "${duplicate.id}" is defined twice: ${duplicate.kept} is used and ${duplicate.dropped} is ignored (the first folder in precedence order wins). Rename one of them to keep both.`,
      });
    }
  }

  private notify(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        this.options.diagnostics?.report({ severity: 'warning', code: 'TESSERA_LISTENER_ERROR', source: SOURCE, message: `A skill change listener threw: ${String(error)}` });
      }
    }
  }
}

function current({ scan }: Snapshot): boolean {
  for (let index = 0; index < scan.watched.length; index += 1) {
    if (stampPath(scan.watched[index]!) !== scan.stamps[index]) return false;
  }
  return true;
}
