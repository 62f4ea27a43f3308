import { Stage, definePlugin, type Plugin } from '@tessera/kernel';
import { HistoryStorage, type HistoryStorageOptions } from './history-storage.js';

/**
 * Records every submitted prompt in a `HistoryStorage`. It observes `userPromptSubmit`
 * (it never changes the prompt) and closes the database at shutdown. Pass an instance to
 * read the history elsewhere (prompt recall UI).
 */
export function promptHistory(options: HistoryStorageOptions | HistoryStorage = {}): Plugin {
  let storage: HistoryStorage | undefined = options instanceof HistoryStorage ? options : undefined;
  const open = (): HistoryStorage => (storage ??= new HistoryStorage(options as HistoryStorageOptions));
  return definePlugin({
    name: 'prompt-history',
    register({ hooks }) {
      hooks.userPromptSubmit.tap({ name: 'prompt-history', stage: Stage.Observe }, ({ prompt, session }) => {
        open().add(prompt, session.cwd);
        return {};
      });
    },
    async shutdown() {
      await storage?.close();
    },
  });
}
