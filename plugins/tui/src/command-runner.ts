import { Input, matchesKey, type AutocompleteItem, type Editor, type SlashCommand, type TUI } from '@mariozechner/pi-tui';
import { describeError, type ICommandInteraction, type ICommandResult, type ToolUseBlock } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { Gap, TextBlock, userPrompt } from './components.js';
import { WorkspaceCompletion } from './mention-completion.js';
import type { ModalHost } from './modal-host.js';
import type { StatusBar } from './status-bar.js';
import { style } from './theme.js';
import type { Transcript } from './transcript.js';
import type { TesseraTuiOptions } from './tui-options.js';

/** What running commands needs from the app: its parts, and its own methods as callbacks. */
export interface CommandRunnerContext {
  options: TesseraTuiOptions;
  tui: TUI;
  editor: Editor;
  transcript: Transcript;
  modals: ModalHost;
  status: StatusBar;
  /** The session; commands only run once it is ready. */
  session: () => InteractiveSession;
  /** Marks a turn (or a command) as running: Esc and Ctrl-C interrupt it, prompts queue. */
  setBusy: (busy: boolean) => void;
  exit: (code: number) => void;
  notice: (text: string, ms?: number) => void;
  renderStatus: () => void;
  runPrompt: (text: string) => Promise<void>;
  openSessionPicker: () => Promise<void>;
  /** Shows a resumed session (or a fresh one when `id` is undefined) in place of this one. */
  replaceSession: (id: string | undefined) => Promise<void>;
}

/**
 * What the prompt does with `/command`, `!shell` and `#memory` lines, and with a command's
 * result: its message, its effects (exit, pickers, settings, a new session…) and its interaction.
 */
export class CommandRunner {
  constructor(private readonly context: CommandRunnerContext) {}

  private get transcript(): Transcript {
    return this.context.transcript;
  }

  private get options(): TesseraTuiOptions {
    return this.context.options;
  }

  private get s(): InteractiveSession {
    return this.context.session();
  }

  private note(text: string, colour?: (text: string) => string): void {
    this.transcript.note(text, colour);
  }

  async runCommand(text: string): Promise<void> {
    const [, name = '', args = ''] = /^\/(\S*)\s*([\s\S]*)$/.exec(text) ?? [];
    this.transcript.addChild(userPrompt(text));
    if (name === 'exit' || name === 'quit') {
      this.context.exit(0);
      return;
    }
    if (name === 'clear' || name === 'new' || name === 'reset') {
      if (this.options.switchSession) {
        await this.context.replaceSession(undefined);
        this.note('Started a new conversation.');
        return;
      }
    }
    let result: ICommandResult | null;
    this.context.setBusy(true);
    this.context.renderStatus();
    try {
      result = await this.s.executeCommand(name, args);
    } catch (error) {
      result = { success: false, message: describeError(error) };
    } finally {
      this.context.setBusy(false);
    }
    if (result === null) {
      this.note(`Unknown command /${name}. Type / to see the commands.`, style.red);
      return;
    }
    await this.showResult(result);
  }

  async showResult(result: ICommandResult): Promise<void> {
    if (result.message !== '') this.note(result.message, result.success ? (text) => text : style.red);
    for (const diagnostic of result.diagnostics ?? []) this.note(diagnostic, style.yellow);
    for (const effect of result.effects ?? []) {
      switch (effect.type) {
        case 'session-exit-requested':
          this.context.exit(0);
          return;
        case 'session-picker-requested':
          await this.context.openSessionPicker();
          break;
        // The session itself applied `model-change-requested`, `language-change-requested` and
        // `session-renamed` (InteractiveSession.executeCommand); the status line shows the result.
        case 'statusline-settings-patch':
          if (typeof effect.patch.enabled === 'boolean') this.context.status.statusEnabled = effect.patch.enabled;
          if (typeof effect.patch.showGitBranch === 'boolean') this.context.status.showGitBranch = effect.patch.showGitBranch;
          break;
        case 'plugin-tui-requested':
          if (this.options.pluginManager) {
            try {
              this.note(await this.options.pluginManager());
            } catch (error) {
              this.note(`Listing plugins failed: ${describeError(error)}`, style.red);
            }
          } else this.note('Bundle plugins are not part of this composition.', style.yellow);
          break;
        case 'settings-reset-requested':
          this.confirmReset();
          break;
        case 'session-restart-requested':
          if (this.options.switchSession) await this.startFreshSession(effect.message);
          else {
            this.note(effect.message);
            this.context.exit(0);
            return;
          }
          break;
        case 'conversation-history-cleared':
          this.note('Conversation cleared.');
          break;
        case 'prompt-submit-requested':
          await this.context.runPrompt(effect.text);
          break;
        case 'plugin-registry-reload-requested':
          if (this.options.reloadPlugins) {
            try {
              this.note(await this.options.reloadPlugins());
            } catch (error) {
              this.note(`Reloading plugins failed: ${describeError(error)}`, style.red);
            }
          }
          break;
        default:
          break;
      }
    }
    if (result.interaction) this.showInteraction(result.interaction);
    this.context.renderStatus();
    await this.refreshCompletions();
  }

  /** `/reset`: asks first; on yes the host puts the user settings aside, then the app exits. */
  private confirmReset(): void {
    if (!this.options.resetSettings) {
      this.note('This host cannot reset settings.', style.yellow);
      return;
    }
    const reset = this.options.resetSettings;
    this.context.modals.choose('Reset your user settings to the defaults? Tessera exits afterwards.', [
      { value: 'no', label: 'No, keep them' },
      { value: 'yes', label: 'Yes, reset and exit' },
    ], (value) => {
      if (value !== 'yes') {
        this.note('Settings kept.');
        return;
      }
      void reset().then(
        (line) => {
          this.note(line);
          this.context.exit(0);
        },
        (error: unknown) => this.note(`Resetting settings failed: ${describeError(error)}`, style.red),
      );
    });
  }

  /** `session-restart-requested`: a fresh session replaces this one (the old one stays stored). */
  private async startFreshSession(message: string): Promise<void> {
    try {
      await this.context.replaceSession(undefined);
      this.note(message);
    } catch (error) {
      this.note(`Starting a new session failed: ${describeError(error)}`, style.red);
    }
  }

  private showInteraction(interaction: ICommandInteraction): void {
    const { modals } = this.context;
    const { prompt } = interaction;
    const finish = async (value: string | undefined): Promise<void> => {
      const result = value === undefined ? await interaction.cancel?.() : await interaction.submit(value);
      if (result) await this.showResult(result);
    };
    if (prompt.kind === 'choice') {
      modals.choose(prompt.title, prompt.choices.map((choice) => ({ ...choice })), (value) => void finish(value));
      return;
    }
    const input = new Input();
    const header = new TextBlock(`${style.bold(prompt.title)}${prompt.description ? `\n${style.gray(prompt.description)}` : ''}`);
    input.onSubmit = (value) => {
      if (prompt.validation && !new RegExp(prompt.validation.pattern).test(value)) {
        this.context.notice(prompt.validation.message, 3000);
        return;
      }
      modals.close();
      void finish(value);
    };
    modals.open({
      render: (width) => [...header.render(width), ...(prompt.masked ? [`> ${'•'.repeat(input.getValue().length)}`] : input.render(width))],
      invalidate: () => input.invalidate(),
      handleInput: (data) => {
        if (matchesKey(data, 'escape')) {
          modals.close();
          void finish(undefined);
          return;
        }
        input.handleInput(data);
      },
    });
  }

  /** `!command`: runs it through the Bash tool (permissions apply) and shows it as a tool row. */
  async runShell(command: string): Promise<void> {
    if (command === '') return;
    this.transcript.addChild(userPrompt(`!${command}`));
    const session = this.s.getSession();
    const call: ToolUseBlock = { type: 'tool_use', id: `user-shell-${Date.now().toString(36)}`, name: 'Bash', input: { command } };
    this.context.setBusy(true);
    const controller = new AbortController();
    const stopOnAbort = this.s.on('interrupted', () => controller.abort());
    const unsubscribe = session.subscribe((event) => {
      if (event.type === 'tool_start' && event.toolCallId === call.id) this.transcript.onTool({ toolCallId: call.id, toolName: 'Bash', firstArg: command, isRunning: true });
    });
    try {
      // Loaded here, not at start-up: the first paint does not wait for the kernel's modules.
      const { executeToolCall } = await import('@tessera/kernel');
      const result = await executeToolCall(session, call, 0, controller.signal);
      const output = typeof result.output === 'string' ? result.output : result.output.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
      this.transcript.onTool({
        toolCallId: call.id,
        toolName: 'Bash',
        firstArg: command,
        isRunning: false,
        result: result.success ? 'success' : result.metadata?.denied === true ? 'denied' : 'error',
        toolResultData: output,
        ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }),
      });
      if (result.success) session.injectMessage('user', `<bash-input>${command}</bash-input>\n<bash-stdout>${output}</bash-stdout>`);
      else if (result.metadata?.denied === true) this.note(output, style.red);
    } finally {
      unsubscribe();
      stopOnAbort();
      this.context.setBusy(false);
      this.transcript.addChild(new Gap());
      this.transcript.tickSpinner();
      this.context.tui.requestRender();
    }
  }

  /** `#note`: adds the line to the project memory. */
  async remember(text: string): Promise<void> {
    if (text === '') return;
    this.transcript.addChild(userPrompt(`#${text}`));
    const result = await this.s.executeCommand('memory', `add project notes ${text}`);
    this.note(result?.message ?? 'Project memory is not enabled in this session.', result?.success ? (line) => line : style.red);
  }

  /** `/` completion from the session's command registry (it changes with plugins), `@` from the workspace. */
  async refreshCompletions(): Promise<void> {
    let commands: SlashCommand[] = [];
    try {
      const registry = await this.s.getCommandRegistry();
      commands = registry.getCommands().map((command) => ({
        name: command.name,
        description: command.description,
        ...(command.argumentHint === undefined ? {} : { argumentHint: command.argumentHint }),
        ...(command.subcommands && command.subcommands.length > 0
          ? {
              getArgumentCompletions: (prefix: string): AutocompleteItem[] =>
                command.subcommands!.filter((sub) => sub.name.startsWith(prefix)).map((sub) => ({ value: sub.name, label: sub.name, description: sub.description })),
            }
          : {}),
      }));
    } catch {
      // No registry (a bare session): completion offers files only.
    }
    this.context.editor.setAutocompleteProvider(new WorkspaceCompletion(commands, this.options.cwd));
  }
}
