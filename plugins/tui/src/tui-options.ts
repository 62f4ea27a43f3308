import type { PermissionMode } from '@tessera/contracts';
import type { InteractiveSession, IResumableSession } from '@tessera/kernel';
import type { TerminalApprovals } from './approvals.js';
import type { StatusLineCommand } from './status-line.js';
import type { Terminal } from './terminal.js';

/** What the host gives `TesseraTui`: the terminal, the session, and the callbacks for what only the host can do. */
export interface TesseraTuiOptions {
  terminal: Terminal;
  /** The session, or its promise: the prompt is drawn at once and typed input waits for it. */
  session: InteractiveSession | Promise<InteractiveSession>;
  /** The mode the status line shows before the session is ready. */
  initialMode?: PermissionMode;
  approvals: TerminalApprovals;
  cwd: string;
  version: string;
  /** The model's display name (changes with `/model`). */
  modelLabel: () => string;
  /** Shift+Tab may cycle into `bypassPermissions` (`--allow-dangerously-skip-permissions`). */
  allowBypass?: boolean;
  /** Claude Code's `statusLine` setting. */
  statusLine?: StatusLineCommand;
  /** The current git branch, shown in the status line. */
  gitBranch?: string;
  /** USD for a turn's tokens on the current model (0 when its price is unknown). */
  /** USD for one turn's usage: uncached input, output, cache reads and cache writes (priced apart). */
  costOf?: (usage: { input: number; output: number; cacheRead: number; cacheWrite: number }) => number;
  /** "Allow always": write `rule` to the local settings file; returns the file's display path. */
  saveAllowRule?: (rule: string) => Promise<string>;
  /** Stored sessions for the picker (`/resume`, `-r` with no id). */
  listSessions?: () => Promise<IResumableSession[]>;
  /** Replaces the running session by a resumed one (or a fresh one when `id` is undefined). */
  switchSession?: (id: string | undefined) => Promise<InteractiveSession>;
  /** Recent prompts, newest first (↑ history, Ctrl-R search). */
  recentPrompts?: () => readonly string[];
  /** `/reload-plugins` (and a successful `/plugin …`): re-read bundle plugins; returns a line to show. */
  reloadPlugins?: () => Promise<string>;
  /** `/plugin` with no arguments: the installed plugins and how to manage them, as text to show. */
  pluginManager?: () => Promise<string>;
  /**
   * `/reset`, once the user confirmed: put the user settings aside (the host decides how; the
   * CLI moves the file to a backup); returns a line to show. The app exits afterwards.
   */
  resetSettings?: () => Promise<string>;
  /** Open the session picker as soon as the app starts (`tessera -r` with no id). */
  openPicker?: boolean;
  /** Told once the user asked to leave (Ctrl-C twice, Ctrl-D, `/exit`). */
  onExit: (code: number) => void;
}
