import type { TUI } from '@mariozechner/pi-tui';
import type { PermissionMode } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { TextBlock } from './components.js';
import { StatusLineRunner } from './status-line.js';
import { style } from './theme.js';
import type { TesseraTuiOptions } from './tui-options.js';

/** The mode indicator under the prompt, as Claude Code words it. */
const MODE_LABELS: Record<PermissionMode, string> = {
  default: '⏸ manual mode on',
  acceptEdits: '⏵⏵ accept edits on',
  plan: '⏸ plan mode on',
  bypassPermissions: '⏵⏵ bypass permissions on',
  dontAsk: '⏵⏵ don’t ask mode on',
} as Record<PermissionMode, string>;

/**
 * The row under the prompt: model, mode, context, cost, branch, tasks; with Claude Code's
 * `statusLine` setting, the command's output above it.
 */
export class StatusBar {
  readonly statusRow = new TextBlock('', '', style.gray);
  /** USD spent in this run of the app. */
  costUsd = 0;
  contextPercent = 0;
  /** `/statusline on|off` and `/statusline branch on|off`, for this run of the app. */
  statusEnabled = true;
  showGitBranch = true;
  private readonly started = Date.now();
  private readonly statusRunner: StatusLineRunner | undefined;

  /** `onCustomText` is called when the `statusLine` command printed a new line. */
  constructor(
    private readonly options: TesseraTuiOptions,
    private readonly tui: TUI,
    onCustomText: () => void,
  ) {
    if (options.statusLine) this.statusRunner = new StatusLineRunner(options.statusLine, options.cwd, onCustomText);
  }

  /** Redraws the row and asks the `statusLine` command (if any) for a new line. */
  render({ interactive, tasks, busy }: { interactive: InteractiveSession | undefined; tasks: number; busy: boolean }): void {
    const session = interactive?.getSession();
    const mode = session?.getPermissionMode() ?? this.options.initialMode ?? 'default';
    const parts = [
      this.options.modelLabel(),
      MODE_LABELS[mode] ?? mode,
      `${Math.round(this.contextPercent)}% context`,
      `$${this.costUsd.toFixed(this.costUsd < 1 ? 4 : 2)}`,
      ...(this.options.gitBranch && this.showGitBranch ? [`⎇ ${this.options.gitBranch}`] : []),
      ...(tasks > 0 ? [`${tasks} task${tasks === 1 ? '' : 's'}`] : []),
      ...(busy ? ['Esc to interrupt'] : []),
    ];
    const custom = this.statusRunner?.text;
    // `/statusline off` hides the row (the prompt stays); `/statusline on` brings it back.
    this.statusRow.setText(!this.statusEnabled ? '' : custom ? `${custom}\n${parts.join(' · ')}` : parts.join(' · '));
    if (!session || !interactive) {
      this.tui.requestRender();
      return;
    }
    this.statusRunner?.request({
      session_id: interactive.getSessionId(),
      ...(interactive.getName() === undefined ? {} : { session_name: interactive.getName()! }),
      cwd: this.options.cwd,
      model: { id: session.getModel() ?? this.options.modelLabel(), display_name: this.options.modelLabel() },
      workspace: { current_dir: this.options.cwd, project_dir: this.options.cwd },
      version: this.options.version,
      permission_mode: mode,
      cost: { total_cost_usd: this.costUsd, total_duration_ms: Date.now() - this.started },
      context_window: { used_percentage: this.contextPercent, context_window_size: interactive.getContextState().maxTokens },
    });
    this.tui.requestRender();
  }

  close(): void {
    this.statusRunner?.close();
  }
}
