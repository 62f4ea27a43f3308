import { Input, matchesKey, truncateToWidth, type Component, type Focusable } from '@mariozechner/pi-tui';
import type { ApprovalRequest } from '@tessera/contracts';
import { relative } from 'node:path';
import { style } from './theme.js';

export type PermissionChoice = 'once' | 'always' | 'deny';

const PREVIEW_LINES = 10;

function field(input: unknown, name: string): string | undefined {
  const value = input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** What the call would do, in a few lines: the command, the path, the edit as a diff. */
export function describeCall(request: ApprovalRequest, cwd: string): { title: string; preview: string[] } {
  const { toolName, input } = request;
  const path = field(input, 'file_path') ?? field(input, 'path') ?? field(input, 'notebook_path');
  const shown = path === undefined ? undefined : relative(cwd, path).startsWith('..') ? path : relative(cwd, path) || '.';
  switch (toolName) {
    case 'Bash':
      return { title: 'Bash command', preview: [(field(input, 'command') ?? '').trim(), ...(field(input, 'description') ? [style.gray(field(input, 'description')!)] : [])] };
    case 'Edit': {
      const before = (field(input, 'old_string') ?? '').split('\n').map((line) => style.red(`- ${line}`));
      const after = (field(input, 'new_string') ?? '').split('\n').map((line) => style.green(`+ ${line}`));
      return { title: `Edit ${shown ?? 'file'}`, preview: [...before, ...after] };
    }
    case 'Write':
      return { title: `Write ${shown ?? 'file'}`, preview: (field(input, 'content') ?? '').split('\n').map((line) => style.green(`+ ${line}`)) };
    default: {
      const text = JSON.stringify(input ?? {}, null, 1) ?? '';
      return { title: toolName, preview: shown ? [shown] : text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && line !== '{' && line !== '}') };
    }
  }
}

/**
 * An inline permission prompt: the tool, its arguments (command, path, diff preview), the rule
 * "always" would save, and three answers — keys 1–3, arrows and Enter; Esc declines. Declining
 * asks for an optional reason that goes to the model.
 */
export class PermissionPrompt implements Component, Focusable {
  focused = false;
  private selected = 0;
  private reason: Input | undefined;
  private readonly described: { title: string; preview: string[] };

  constructor(
    private readonly request: ApprovalRequest,
    cwd: string,
    private readonly done: (choice: PermissionChoice, reason?: string) => void,
  ) {
    this.described = describeCall(request, cwd);
  }

  private options(): string[] {
    const rule = this.request.suggestedRule;
    return ['Yes', rule ? `Yes, and don't ask again for ${rule} (saved to .tessera/settings.local.json)` : "Yes, and don't ask again this session", 'No, and tell Tessera what to do differently (esc)'];
  }

  render(width: number): string[] {
    const inner = Math.max(10, width - 4);
    const border = style.accent(`╭${'─'.repeat(Math.max(0, width - 2))}╮`);
    const lines = [border, `${style.accent('│')} ${style.bold(truncateToWidth(this.described.title, inner))}`];
    const preview = this.described.preview;
    for (const line of preview.slice(0, PREVIEW_LINES)) lines.push(`${style.accent('│')}   ${truncateToWidth(line, inner - 2)}`);
    if (preview.length > PREVIEW_LINES) lines.push(`${style.accent('│')}   ${style.gray(`… ${preview.length - PREVIEW_LINES} more lines`)}`);
    lines.push(`${style.accent('│')}`);
    if (this.reason) {
      lines.push(`${style.accent('│')} What should Tessera do instead? ${style.gray('(Enter to send, empty to just decline)')}`);
      for (const line of this.reason.render(inner)) lines.push(`${style.accent('│')} ${line}`);
    } else {
      lines.push(`${style.accent('│')} Do you want to proceed?`);
      for (const [index, option] of this.options().entries()) {
        const label = truncateToWidth(`${index + 1}. ${option}`, inner - 2);
        lines.push(`${style.accent('│')} ${index === this.selected ? style.accent(`❯ ${label}`) : `  ${label}`}`);
      }
    }
    lines.push(style.accent(`╰${'─'.repeat(Math.max(0, width - 2))}╯`));
    return lines;
  }

  handleInput(data: string): void {
    if (this.reason) {
      if (matchesKey(data, 'escape')) {
        this.done('deny');
        return;
      }
      this.reason.focused = true;
      this.reason.handleInput(data);
      return;
    }
    if (matchesKey(data, 'up')) this.selected = (this.selected + 2) % 3;
    else if (matchesKey(data, 'down') || matchesKey(data, 'tab')) this.selected = (this.selected + 1) % 3;
    else if (matchesKey(data, 'enter')) this.pick(this.selected);
    else if (matchesKey(data, 'escape')) this.pick(2);
    else if (data === '1' || data === '2' || data === '3') this.pick(Number(data) - 1);
  }

  private pick(index: number): void {
    if (index === 0) this.done('once');
    else if (index === 1) this.done('always');
    else {
      this.reason = new Input();
      this.reason.onSubmit = (value) => this.done('deny', value.trim() === '' ? undefined : value.trim());
    }
  }

  invalidate(): void {}
}
