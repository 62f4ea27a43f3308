/**
 * The safe edit → verify loop for an agent changing its own source tree, as a plan of data.
 * The planner writes nothing, stores no checkpoint and starts no process: a host runs each
 * step's commands in child processes, so the running agent stays the old runtime (with the
 * modules it already loaded) while the commands see the new files on disk.
 */

/** A command to run in a child process, from the repository root. */
export interface SelfHostingCommand {
  command: string;
  args: string[];
}

export type SelfHostingStepKind =
  | 'checkpoint'
  | 'atomic_mutation'
  | 'process_handoff'
  | 'package_verification'
  | 'harness_verification'
  | 'rollback_recovery';

export interface SelfHostingStep {
  /** Unique in the plan: the kind, with the package for package verification. */
  id: string;
  kind: SelfHostingStepKind;
  description: string;
  /** `on_failure` steps run only after a failed step (rollback). */
  when: 'always' | 'on_failure';
  commands: SelfHostingCommand[];
  /** The files the step concerns (checkpoint, mutation, rollback). */
  files?: string[];
  /** The workspace a package verification step checks: its name and directory. */
  package?: { name: string; directory: string };
}

export interface SelfHostingVerificationPlanInput {
  /** Files the edit changes, relative to the repository root. */
  changedFiles: readonly string[];
  /** Workspaces to verify, by package name (`@tessera/tasks`) or directory (`libs/tasks`). */
  packageScopes: readonly string[];
  /** The ref the change is measured against (`origin/main`). */
  baseRef: string;
  /** Package name → directory, for names the Tessera convention does not cover. */
  workspaceDirectories?: Readonly<Record<string, string>>;
  /** Replaces the harness commands (default: `git diff --check <baseRef>`, then `npm test`). */
  harnessCommands?: readonly SelfHostingCommand[];
}

export interface SelfHostingVerificationPlan {
  baseRef: string;
  steps: SelfHostingStep[];
}

// Tessera's layout: package name prefix → folder. `@tessera/x` with no prefix is a library.
const LAYOUT: ReadonlyArray<[prefix: string, folder: string]> = [
  ['@tessera/plugin-', 'plugins/'],
  ['@tessera/preset-', 'presets/'],
  ['@tessera/example-', 'examples/'],
  ['@tessera/', 'libs/'],
];
const TOP_LEVEL: Readonly<Record<string, string>> = { '@tessera/contracts': 'contracts', '@tessera/kernel': 'kernel' };
const WORKSPACE_OF_FILE = /^(contracts|kernel|(?:libs|plugins|presets|examples)\/[^/]+)\//;

/**
 * Orders the loop: checkpoint the changed files, apply the edit atomically, hand off to child
 * processes, verify each workspace (the named scopes, then any other workspace a changed file
 * lies in), run the repository harness (always present), and — only on failure — restore the
 * checkpoint. Package verification is Tessera's own: `npx tsc -b <dir>` (type-check and build
 * the workspace and its references) and `npx vitest run <dir>` (tests run from the root, whose
 * vitest config resolves workspace sources).
 */
export function planSelfHostingVerification(input: SelfHostingVerificationPlanInput): SelfHostingVerificationPlan {
  const changedFiles = input.changedFiles.map(toPosix);
  const steps: SelfHostingStep[] = [
    {
      id: 'checkpoint',
      kind: 'checkpoint',
      description: 'Record a checkpoint of every file the edit touches, so a failed verification can restore it.',
      when: 'always',
      commands: [],
      files: changedFiles,
    },
    {
      id: 'atomic_mutation',
      kind: 'atomic_mutation',
      description: 'Write each changed file through a temporary file in the same folder and a rename.',
      when: 'always',
      commands: [],
      files: changedFiles,
    },
    {
      id: 'process_handoff',
      kind: 'process_handoff',
      description: 'Keep the running process on the modules it loaded; run every verification command in a child process against the files on disk.',
      when: 'always',
      commands: [],
    },
  ];
  for (const workspace of workspacesToVerify(input, changedFiles)) {
    steps.push({
      id: `package_verification:${workspace.name}`,
      kind: 'package_verification',
      description: `Type-check, build and test ${workspace.name} (${workspace.directory}).`,
      when: 'always',
      commands: [
        { command: 'npx', args: ['tsc', '-b', workspace.directory] },
        { command: 'npx', args: ['vitest', 'run', workspace.directory] },
      ],
      package: workspace,
    });
  }
  steps.push(
    {
      id: 'harness_verification',
      kind: 'harness_verification',
      description: `Verify the whole repository against ${input.baseRef}.`,
      when: 'always',
      commands: (input.harnessCommands ?? [
        { command: 'git', args: ['diff', '--check', input.baseRef] },
        { command: 'npm', args: ['test'] },
      ]).map((command) => ({ command: command.command, args: [...command.args] })),
    },
    {
      id: 'rollback_recovery',
      kind: 'rollback_recovery',
      description: 'Restore the checkpointed files, then run the harness again to confirm the tree is back to its previous state.',
      when: 'on_failure',
      commands: [],
      files: changedFiles,
    },
  );
  return { baseRef: input.baseRef, steps };
}

function workspacesToVerify(input: SelfHostingVerificationPlanInput, changedFiles: readonly string[]): Array<{ name: string; directory: string }> {
  const explicit = input.workspaceDirectories ?? {};
  const nameOf = (directory: string): string =>
    Object.entries(explicit).find(([, dir]) => trimDirectory(dir) === directory)?.[0] ??
    (WORKSPACE_OF_FILE.test(`${directory}/`) ? packageOfDirectory(directory) : directory);
  // Keyed by directory: a scope named twice (by name and by folder) is verified once.
  const found = new Map<string, string>();
  for (const scope of input.packageScopes) {
    const isName = scope.startsWith('@');
    const directory = trimDirectory(isName ? (explicit[scope] ?? directoryOfPackage(scope)) : scope);
    if (!found.has(directory)) found.set(directory, isName ? scope : nameOf(directory));
  }
  for (const file of changedFiles) {
    const directory = WORKSPACE_OF_FILE.exec(file)?.[1];
    if (directory !== undefined && !found.has(directory)) found.set(directory, nameOf(directory));
  }
  return [...found].map(([directory, name]) => ({ name, directory }));
}

function directoryOfPackage(scope: string): string {
  const top = TOP_LEVEL[scope];
  if (top !== undefined) return top;
  for (const [prefix, folder] of LAYOUT) if (scope.startsWith(prefix)) return folder + scope.slice(prefix.length);
  return scope;
}

function packageOfDirectory(directory: string): string {
  for (const [name, dir] of Object.entries(TOP_LEVEL)) if (dir === directory) return name;
  const [folder, base] = directory.split('/') as [string, string];
  const prefix = LAYOUT.find(([, layoutFolder]) => layoutFolder === `${folder}/`)?.[0] ?? '@tessera/';
  return prefix + base;
}

function trimDirectory(directory: string): string {
  return toPosix(directory).replace(/\/+$/, '');
}

function toPosix(path: string): string {
  return path.replace(/\\/g, '/').replace(/^\.\//, '');
}
