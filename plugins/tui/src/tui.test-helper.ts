import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import xterm from '@xterm/headless';
import { ApprovalHandler } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, type Kernel, type Plugin } from '@tessera/kernel';
import { editCheckpoints } from '@tessera/plugin-checkpoints';
import { builtinCommands } from '@tessera/plugin-commands';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import type { ScriptedProviderOptions } from '@tessera/plugin-provider-scripted';
import { builtinTools } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';
import { TesseraTui, type TesseraTuiOptions } from './app.js';
import { TerminalApprovals } from './approvals.js';
import { RecordingTerminal } from './terminal.js';

/** A terminal emulator fed with everything the app writes: what a person would see. */
export class XtermScreen {
  readonly term: InstanceType<typeof xterm.Terminal>;

  constructor(columns: number, rows: number) {
    this.term = new xterm.Terminal({ cols: columns, rows, allowProposedApi: true, scrollback: 1000 });
  }

  write(data: string): void {
    this.term.write(data);
  }

  /** Waits until every write so far has been parsed. */
  flush(): Promise<void> {
    return new Promise((resolve) => this.term.write('', resolve));
  }

  resize(columns: number, rows: number): void {
    this.term.resize(columns, rows);
  }

  /** The visible rows, right-trimmed. */
  lines(): string[] {
    const buffer = this.term.buffer.active;
    const out: string[] = [];
    for (let row = 0; row < this.term.rows; row++) out.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '');
    return out;
  }

  /** Scrollback plus the visible rows. */
  all(): string[] {
    const buffer = this.term.buffer.active;
    const out: string[] = [];
    for (let row = 0; row < buffer.length; row++) out.push(buffer.getLine(row)?.translateToString(true) ?? '');
    return out;
  }

  text(): string {
    return this.lines().join('\n');
  }
}

export const KEY = {
  enter: '\r',
  escape: '\x1b',
  shiftTab: '\x1b[Z',
  ctrlC: '\x03',
  ctrlD: '\x04',
  ctrlR: '\x12',
  up: '\x1b[A',
  down: '\x1b[B',
  backspace: '\x7f',
  tab: '\t',
} as const;

export interface Harness {
  app: TesseraTui;
  terminal: RecordingTerminal;
  screen: XtermScreen;
  session: InteractiveSession;
  kernel: Kernel;
  dir: string;
  exits: number[];
  savedRules: string[];
  /** Types text one character at a time (as a person does), then waits for the redraw. */
  type(text: string): Promise<void>;
  press(key: string): Promise<void>;
  /** Waits for the renderer (16 ms frames) and the emulator. */
  settle(ms?: number): Promise<void>;
  waitFor(predicate: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/** The app over a real kernel (scripted model, real tools, permissions and checkpoints) in a temp dir. */
export async function startHarness(
  options: { turns?: ScriptedProviderOptions['turns']; columns?: number; rows?: number; rules?: { allow?: string[]; ask?: string[] }; app?: Partial<TesseraTuiOptions>; plugins?: Plugin[] } = {},
): Promise<Harness> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-tui-')));
  const approvals = new TerminalApprovals();
  const kernel = await createKernel({
    plugins: testPreset({
      turns: options.turns ?? [],
      replace: [permissionsPlugin({ rules: { allow: options.rules?.allow ?? [], ask: options.rules?.ask ?? [], deny: [] }, settingsRoot: dir })],
      plugins: [
        definePlugin({ name: 'tui-approvals', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }),
        ...builtinTools(),
        editCheckpoints(),
        ...builtinCommands(),
        ...(options.plugins ?? []),
      ],
    }),
  });
  const session = new InteractiveSession({ kernel, cwd: dir });
  await session.whenReady();
  const columns = options.columns ?? 80;
  const rows = options.rows ?? 24;
  const terminal = new RecordingTerminal(columns, rows);
  const screen = new XtermScreen(columns, rows);
  terminal.onWrite = (data) => screen.write(data);
  const exits: number[] = [];
  const savedRules: string[] = [];
  const app = new TesseraTui({
    terminal,
    session,
    approvals,
    cwd: dir,
    version: '0.0.0-test',
    modelLabel: () => 'scripted-model',
    onExit: (code) => exits.push(code),
    saveAllowRule: async (rule) => {
      savedRules.push(rule);
      return '.tessera/settings.local.json';
    },
    ...options.app,
  });
  await app.start();
  const settle = async (ms = 40): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await screen.flush();
  };
  await settle();
  const harness: Harness = {
    app,
    terminal,
    screen,
    session,
    kernel,
    dir,
    exits,
    savedRules,
    async type(text) {
      for (const char of text) terminal.type(char);
      await settle();
    },
    async press(key) {
      terminal.type(key);
      await settle();
    },
    settle,
    async waitFor(predicate, what, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await settle(20);
        const text = screen.all().join('\n');
        if (predicate(text)) return text;
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}. Screen:\n${screen.text()}`);
      }
    },
    async close() {
      app.stop();
      await app.getSession()?.shutdown().catch(() => undefined);
      await kernel.shutdown();
    },
  };
  return harness;
}
