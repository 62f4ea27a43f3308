import { Clock, ProjectMemory, SessionServiceFactoryContribution, systemClock, type SessionServiceFactory } from '@tessera/contracts';
import { PluginOptionsError, definePlugin, type Plugin } from '@tessera/kernel';
import { isAbsolute } from 'node:path';
import { projectFolderFor } from '@tessera/formats/project-folder';
import { DefaultProjectMemory } from './default-project-memory.js';
import { MemoryPolicyEvaluator } from './memory-policy-evaluator.js';
import { MEMORY_DIRECTORY } from './project-memory-store.js';

export const PROJECT_MEMORY_PLUGIN_NAME = 'project-memory';
const FACTORY = 'projectMemory()';

export interface ProjectMemoryOptions {
  /**
   * An absolute project root whose `.tessera/memory/` every session uses. Default: for each
   * session, the nearest folder from its cwd up to the repository root that has
   * `.tessera/memory/`, else the repository root (the cwd outside a repository) — where the
   * system prompt reads it too; the kernel-wide service starts from `process.cwd()`.
   */
  root?: string;
}

/**
 * Provides `ProjectMemory`. Each session gets its own, bound to its cwd, through a
 * `SessionServiceFactory` (`session.services.get(ProjectMemory)`), so commands need no cwd and
 * the session's events and used references stay apart. The kernel-wide binding, built by the
 * container, serves hosts that have no session yet (a CLI `memory list`): it uses `root` or
 * the process cwd. Nothing here taps a hook: memory is written only through explicit calls.
 */
/** Where a session started in `cwd` keeps project memory (see `ProjectMemoryOptions.root`). */
export function memoryRoot(cwd: string): string {
  return projectFolderFor(cwd, MEMORY_DIRECTORY).root;
}

export function projectMemory(options: ProjectMemoryOptions = {}): Plugin {
  checkOptions(options);
  const { root } = options;
  return definePlugin({
    name: PROJECT_MEMORY_PLUGIN_NAME,
    provides: [ProjectMemory],
    contributes: [SessionServiceFactoryContribution],
    optional: [Clock],
    register({ bind }) {
      bind(ProjectMemory)
        .toResolvedValue(
          (clock: Clock | undefined) => new DefaultProjectMemory({ root: root ?? memoryRoot(process.cwd()), policy: new MemoryPolicyEvaluator(), now: () => (clock ?? systemClock).now() }),
          [{ serviceIdentifier: Clock, optional: true }],
        )
        .inSingletonScope();
      const perSession: SessionServiceFactory<ProjectMemory> = {
        token: ProjectMemory,
        create: (seed, services) => {
          const clock = services.getOptional(Clock) ?? systemClock;
          return new DefaultProjectMemory({ root: root ?? memoryRoot(seed.cwd), sessionId: seed.sessionId, policy: new MemoryPolicyEvaluator(), now: () => clock.now() });
        },
      };
      bind(SessionServiceFactoryContribution).toConstantValue(perSession as SessionServiceFactory);
    },
  });
}

function checkOptions(options: ProjectMemoryOptions): void {
  if (typeof options !== 'object' || options === null) throw new PluginOptionsError(FACTORY, PROJECT_MEMORY_PLUGIN_NAME, 'options', 'must be an object');
  const { root } = options;
  if (root !== undefined && (typeof root !== 'string' || root.trim() === '' || !isAbsolute(root))) {
    throw new PluginOptionsError(FACTORY, PROJECT_MEMORY_PLUGIN_NAME, 'root', `must be an absolute path, got ${JSON.stringify(root)}`);
  }
}
