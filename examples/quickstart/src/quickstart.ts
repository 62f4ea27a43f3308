import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, toolsPlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { noteSummarizer } from './note-summarizer-model.js';
import { workspaceTools } from './workspace-tools.js';

export interface QuickstartOptions {
  /** Folder to work in; a fresh temp folder with three notes when omitted. */
  workspace?: string;
  /** Pause between streamed words, for a visible stream (default 0). */
  delayMs?: number;
  write?: (text: string) => void;
}

const NOTES: Record<string, string> = {
  'standup.md': '# Standup\nShipped the kernel. Next: permissions and hooks.\n',
  'ideas.md': '# Ideas\nA bundle plugin marketplace.\nA server preset with SSE transport.\n',
  'bugs.md': '# Bugs\nNone yet, which is suspicious.\n',
};

export async function makeWorkspace(): Promise<string> {
  const workspace = await mkdtemp(join(tmpdir(), 'tessera-quickstart-'));
  for (const [name, text] of Object.entries(NOTES)) await writeFile(join(workspace, name), text);
  return workspace;
}

/** Composes an agent from the test preset plus three file tools and runs one multi-step task. */
export async function runQuickstart(options: QuickstartOptions = {}): Promise<{ workspace: string; answer: string }> {
  const sink = options.write ?? ((text: string) => process.stdout.write(text));
  let atLineStart = true;
  const write = (text: string): void => {
    if (text === '') return;
    sink(text);
    atLineStart = text.endsWith('\n');
  };
  const workspace = options.workspace ?? (await makeWorkspace());
  const kernel = await createKernel({
    plugins: [testPreset({ turns: noteSummarizer(options.delayMs ?? 0) }), toolsPlugin(...workspaceTools(workspace))],
  });
  const session = kernel.createSession({ cwd: workspace, systemMessage: 'You keep notes tidy.' });
  // One event stream drives the whole display.
  session.subscribe((event) => {
    if (event.type === 'text_delta') write(event.delta);
    else if (event.type === 'tool_start') write(`${atLineStart ? '' : '\n'}  → ${event.toolName}(${JSON.stringify(event.input)})`);
    else if (event.type === 'tool_end') write(event.success ? ` ✓\n` : ` ✗ ${event.errorCode ?? ''}\n`);
  });
  try {
    write(`workspace: ${workspace}\n\n`);
    const answer = await session.run('Summarise the notes in this workspace into SUMMARY.md.');
    write('\n');
    return { workspace, answer };
  } finally {
    await kernel.shutdown();
  }
}
