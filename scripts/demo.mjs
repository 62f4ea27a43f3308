// `npm run demo`: the tessera CLI on a real multi-step task in a fresh temp workspace. With no
// model key in the environment it uses the built-in demo model (scripted, and labelled so).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const workspace = mkdtempSync(join(tmpdir(), 'tessera-demo-'));
const notes = {
  'standup.md': '# Standup\nShipped the kernel. Next: permissions and hooks.\n',
  'ideas.md': '# Ideas\nA bundle plugin marketplace.\nA server preset with SSE transport.\n',
  'bugs.md': '# Bugs\nNone yet, which is suspicious.\n',
};
for (const [name, text] of Object.entries(notes)) writeFileSync(join(workspace, name), text);

const env = { ...process.env };
const realModel = Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL || env.OPENAI_API_KEY || env.OPENAI_BASE_URL);
const task = 'Summarise the Markdown notes in this folder into SUMMARY.md: one line per note with its title and word count. Look around first (pwd), find the notes, read them, then write the file.';
const args = [join(root, 'presets/cli/bin/tessera.js'), '-p', task, '--verbose', '--allowedTools', 'Bash(pwd)', 'Glob', 'Read', 'Write', '--cwd', workspace];
if (!realModel) {
  args.push('--provider', 'demo');
  env.TESSERA_DEMO_DELAY_MS ??= '15';
}
process.stderr.write(`workspace: ${workspace}\n`);
process.stderr.write(
  realModel
    ? 'model: the one your environment configures (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL / OPENAI_API_KEY / OPENAI_BASE_URL)\n'
    : 'model: the built-in DEMO model (scripted, no API key found; set ANTHROPIC_API_KEY to use Claude on the same task)\n',
);
process.stderr.write(`$ tessera -p "${task.slice(0, 60)}…" --verbose --allowedTools "Bash(pwd)" Glob Read Write\n\n`);
// --verbose streams the text and the tool calls on stderr; stdout carries only the final answer
// (what `tessera -p … > answer.txt` would keep), already seen in the stream, so it is not repeated.
const run = spawnSync(process.execPath, args, { stdio: ['inherit', 'pipe', 'inherit'], env, encoding: 'utf8' });
if (run.status === 0) {
  try {
    process.stderr.write(`\n--- ${join(workspace, 'SUMMARY.md')} ---\n${readFileSync(join(workspace, 'SUMMARY.md'), 'utf8')}`);
  } catch {
    process.stderr.write('\n(no SUMMARY.md was written)\n');
  }
}
process.exitCode = run.status ?? 1;
