import { Clock, SessionServiceFactoryContribution, UserLocalStorage, systemClock, type SessionServiceFactory } from '@tessera/contracts';
import { PluginOptionsError, definePlugin, type Plugin } from '@tessera/kernel';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { DefaultUserLocalStorage } from './default-user-local-storage.js';

export const USER_LOCAL_STORAGE_PLUGIN_NAME = 'user-local-storage';
const FACTORY = 'userLocalStorage()';

export interface UserLocalStorageOptions {
  /** Absolute folder outside every repository you work in. Default `~/.tessera` (read when the service is built). */
  root?: string;
}

/**
 * Provides `UserLocalStorage`. Like `projectMemory()`, each session gets its own service (its
 * cwd decides which repository the root must stay out of) and a kernel-wide one, checked
 * against the process cwd, serves sessionless hosts. The root is validated on first use, not
 * here: the factory does no I/O.
 */
export function userLocalStorage(options: UserLocalStorageOptions = {}): Plugin {
  checkOptions(options);
  const { root } = options;
  return definePlugin({
    name: USER_LOCAL_STORAGE_PLUGIN_NAME,
    provides: [UserLocalStorage],
    contributes: [SessionServiceFactoryContribution],
    optional: [Clock],
    register({ bind }) {
      bind(UserLocalStorage)
        .toResolvedValue(
          (clock: Clock | undefined) => new DefaultUserLocalStorage({ root: root ?? defaultRoot(), cwd: process.cwd(), now: () => (clock ?? systemClock).now() }),
          [{ serviceIdentifier: Clock, optional: true }],
        )
        .inSingletonScope();
      const perSession: SessionServiceFactory<UserLocalStorage> = {
        token: UserLocalStorage,
        create: (seed, services) => {
          const clock = services.getOptional(Clock) ?? systemClock;
          return new DefaultUserLocalStorage({ root: root ?? defaultRoot(), cwd: seed.cwd, now: () => clock.now() });
        },
      };
      bind(SessionServiceFactoryContribution).toConstantValue(perSession as SessionServiceFactory);
    },
  });
}

function defaultRoot(): string {
  return join(homedir(), '.tessera');
}

function checkOptions(options: UserLocalStorageOptions): void {
  if (typeof options !== 'object' || options === null) throw new PluginOptionsError(FACTORY, USER_LOCAL_STORAGE_PLUGIN_NAME, 'options', 'must be an object');
  const { root } = options;
  if (root === undefined) return;
  if (typeof root !== 'string' || root.trim() === '') throw new PluginOptionsError(FACTORY, USER_LOCAL_STORAGE_PLUGIN_NAME, 'root', 'must be a non-empty absolute path');
  if (!isAbsolute(root)) throw new PluginOptionsError(FACTORY, USER_LOCAL_STORAGE_PLUGIN_NAME, 'root', `must be an absolute path, got ${JSON.stringify(root)}`);
}
