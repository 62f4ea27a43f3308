import { chmodSync } from 'node:fs';
import { describeError } from '@tessera/contracts';
import { Input, matchesKey, SelectList, TUI, wrapTextWithAnsi, type Component } from '@mariozechner/pi-tui';
import { ClampedContainer, type Terminal } from '@tessera/plugin-tui';
import type { CliIO } from '../io.js';
import { settingsFileFor, writeSettings } from '../subcommands/shared.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROBE_TIMEOUT_MS = 10_000;

type Kind = 'anthropic' | 'openai' | 'demo';

/** Plain ANSI for the few styled words here (the TUI's theme stays in its package). */
const bold = (text: string): string => `\x1b[1m${text}\x1b[22m`;
const gray = (text: string): string => `\x1b[90m${text}\x1b[39m`;

/**
 * First run with no provider: choose Anthropic, an OpenAI-compatible server or the demo model;
 * give the key as an environment variable's name (stored as `$ENV:NAME`) or paste it (stored
 * in the user settings file, made 0600); then one probe call. Returns what was configured, or
 * undefined when the user left (Esc / Ctrl-C).
 */
export async function runFirstRunSetup(options: { terminal: Terminal; io: CliIO; fetch?: typeof fetch }): Promise<'demo' | 'profile' | undefined> {
  const tui = new TUI(options.terminal, true);
  const lines = new Lines();
  const area = new Holder();
  const root = new ClampedContainer();
  root.addChild(lines);
  root.addChild(area);
  tui.addChild(root);
  tui.start();
  const ask = <T,>(component: Component & { handleInput(data: string): void }, wire: (done: (value: T | undefined) => void) => void): Promise<T | undefined> =>
    new Promise((resolve) => {
      area.set(component);
      tui.setFocus(component);
      const off = tui.addInputListener((data) => {
        if (matchesKey(data, 'ctrl+c')) {
          off();
          resolve(undefined);
          return { consume: true };
        }
        return undefined;
      });
      wire((value) => {
        off();
        resolve(value);
      });
      tui.requestRender();
    });
  const text = (title: string, masked = false): Promise<string | undefined> => {
    const input = new Input();
    lines.add(bold(title));
    const view: Component & { handleInput(data: string): void } = {
      render: (width) => (masked ? [`> ${'•'.repeat(Math.min(input.getValue().length, width - 3))}`] : input.render(width)),
      invalidate: () => input.invalidate(),
      handleInput: (data) => input.handleInput(data),
    };
    return ask<string>(view, (done) => {
      input.onSubmit = (value) => done(value.trim());
      input.onEscape = () => done(undefined);
    });
  };
  try {
    lines.add(`${bold('Welcome to Tessera.')} No model provider is configured yet.`);
    lines.add(gray('Choose one (↑/↓, Enter). Esc or Ctrl-C leaves without changing anything.'));
    const list = new SelectList(
      [
        { value: 'anthropic', label: 'Anthropic (Claude)', description: 'an API key from console.anthropic.com' },
        { value: 'openai', label: 'OpenAI or an OpenAI-compatible server', description: 'api.openai.com, Ollama, vLLM, LM Studio…' },
        { value: 'demo', label: 'The built-in demo model', description: 'no key; scripted answers that use the real tools' },
      ],
      5,
      { selectedPrefix: bold, selectedText: bold, description: gray, scrollInfo: gray, noMatch: gray },
    );
    const kind = await ask<Kind>(list, (done) => {
      list.onSelect = (item) => done(item.value as Kind);
      list.onCancel = () => done(undefined);
    });
    if (kind === undefined) return undefined;
    if (kind === 'demo') return 'demo';
    const defaultVariable = kind === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
    let baseURL: string | undefined;
    if (kind === 'openai') {
      const given = await text('Base URL (Enter for https://api.openai.com/v1):');
      if (given === undefined) return undefined;
      if (given !== '') {
        try {
          const url = new URL(given);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
          baseURL = given;
        } catch {
          lines.add(`${given} is not an http(s) URL; run tessera again to retry.`);
          tui.requestRender();
          return undefined;
        }
      }
    }
    const keyAnswer = await text(`API key: the NAME of an environment variable holding it (Enter for ${defaultVariable}), or paste the key itself:`, true);
    if (keyAnswer === undefined) return undefined;
    const variable = keyAnswer === '' ? defaultVariable : ENV_NAME.test(keyAnswer) && keyAnswer.length < 64 ? keyAnswer : undefined;
    const key = variable === undefined ? keyAnswer : options.io.env[variable];
    if (variable !== undefined && !key) {
      lines.add(`${variable} is not set in this shell. Export it (or paste the key instead), then run tessera again.`);
      tui.requestRender();
      return undefined;
    }
    const file = settingsFileFor('global', options.io);
    const profile = { type: kind, apiKey: variable === undefined ? keyAnswer : `$ENV:${variable}`, ...(baseURL === undefined ? {} : { baseURL }) };
    writeSettings(file, [
      { path: ['providers', kind], value: profile },
      { path: ['currentProvider'], value: kind },
    ]);
    // A pasted key lives in this file: only its owner may read it.
    if (variable === undefined) chmodSync(file, 0o600);
    lines.add(`Saved provider "${kind}" to ${file}${variable === undefined ? ' (mode 0600: it holds the key)' : ` (the key stays in $${variable})`}.`);
    lines.add('Checking the key with one small call…');
    tui.requestRender();
    const problem = await probe(kind, key!, baseURL, options.fetch ?? fetch);
    lines.add(problem === undefined ? 'The provider answered. Starting…' : `The check failed: ${problem}. The settings were kept; fix them with tessera provider list / add, or go on and see.`);
    tui.requestRender();
    return 'profile';
  } catch (error) {
    options.io.stderr(`Setup failed: ${describeError(error)}\n`);
    return undefined;
  } finally {
    await new Promise((done) => setTimeout(done, 50));
    tui.stop();
  }
}

/** One cheap authenticated request: Anthropic's model list, or the OpenAI-compatible `/models`. */
async function probe(kind: 'anthropic' | 'openai', key: string, baseURL: string | undefined, fetchImpl: typeof fetch): Promise<string | undefined> {
  const url = kind === 'anthropic' ? `${(process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com').replace(/\/$/, '')}/v1/models?limit=1` : `${(baseURL ?? 'https://api.openai.com/v1').replace(/\/$/, '')}/models`;
  const headers: Record<string, string> = kind === 'anthropic' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  try {
    const response = await fetchImpl(url, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (response.ok) return undefined;
    return `${url} answered ${response.status}${response.status === 401 ? ' (the key was refused)' : ''}`;
  } catch (error) {
    return `${url} could not be reached (${describeError(error)})`;
  }
}

class Lines implements Component {
  private readonly text: string[] = [];
  add(line: string): void {
    this.text.push(line);
  }
  render(width: number): string[] {
    return this.text.flatMap((line) => wrapTextWithAnsi(line, Math.max(1, width)));
  }
  invalidate(): void {}
}

class Holder implements Component {
  private child: Component | undefined;
  set(child: Component): void {
    this.child = child;
  }
  render(width: number): string[] {
    return this.child?.render(width) ?? [];
  }
  invalidate(): void {
    this.child?.invalidate();
  }
}
