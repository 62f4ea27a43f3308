import type { Message } from '@tessera/contracts';
import { definePlugin, Stage, type Plugin } from '@tessera/kernel';
import type { CliFlags } from '../args.js';
import type { CliIO } from '../io.js';
import type { ResultMessage } from './sdk-messages.js';

/** Where output goes, per `--output-format`. */
export class Output {
  private readonly collected: Record<string, unknown>[] = [];
  private readonly listeners = new Set<(message: Message, session: unknown) => void>();

  constructor(
    private readonly flags: CliFlags,
    private readonly io: CliIO,
  ) {}

  /** A protocol line: written at once in stream-json, kept for `json --verbose`. */
  line(message: Record<string, unknown>): void {
    if (this.flags.outputFormat === 'stream-json') this.io.stdout(`${JSON.stringify(message)}\n`);
    else if (this.flags.outputFormat === 'json' && this.flags.verbose) this.collected.push(message);
  }

  result(result: ResultMessage): void {
    if (this.flags.outputFormat === 'stream-json') this.io.stdout(`${JSON.stringify(result)}\n`);
    else if (this.flags.outputFormat === 'json') {
      if (this.flags.verbose) this.collected.push(result as unknown as Record<string, unknown>);
      else this.io.stdout(`${JSON.stringify(result)}\n`);
    } else if (result.is_error) {
      // As Claude Code: a failure inside the run is the result, on stdout (exit 1 says it failed);
      // only usage errors before the run go to stderr.
      this.io.stdout(`${result.errors?.join('\n') || result.result || 'Error'}\n`);
    } else if (result.structured_output !== undefined) this.io.stdout(`${JSON.stringify(result.structured_output)}\n`);
    else this.io.stdout(`${result.result ?? ''}\n`);
  }

  /** Human progress for `text` output with `--verbose` (stderr keeps stdout the answer only). */
  progress(text: string): void {
    if (this.flags.outputFormat === 'text' && this.flags.verbose) this.io.stderr(text);
  }

  finish(): void {
    if (this.flags.outputFormat === 'json' && this.flags.verbose) this.io.stdout(`${JSON.stringify(this.collected)}\n`);
  }

  onMessage(listener: (message: Message, session: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A plugin that reports each chat message as history receives it (tool results included). */
  historyTap(): Plugin {
    const listeners = this.listeners;
    return definePlugin({
      name: 'cli-output',
      register({ hooks }) {
        hooks.historyAppend.tap({ name: 'cli-output', stage: Stage.Observe }, ({ entry, session }) => {
          if (entry.category !== 'chat' || listeners.size === 0) return;
          for (const listener of listeners) listener(entry.data as Message, session);
        });
      },
    });
  }
}
