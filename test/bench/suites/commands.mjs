#!/usr/bin/env node
// Commands and skills:
//   1. command dispatch: InteractiveSession.executeCommand('cost') µs per call (baseline in the
//      same run: calling the command's execute directly);
//   2. autocomplete: CommandRegistry.getCommands(prefix) over 500 commands + skills, µs per
//      keystroke query (target <= 50 µs; baseline: a plain filter over the same names);
//   3. skill discovery: a cold FolderSkillSource scan of 1,000 skills (target <= 100 ms), and
//      the cached call a turn would pay (none: the list is asked for once, then on change).
//
//   npm run build && node test/bench/suites/commands.mjs [--quick]

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandContribution, SkillSourceContribution } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession } from '@tessera/kernel';
import { builtinCommands } from '@tessera/plugin-commands';
import { FolderSkillSource } from '@tessera/plugin-skills';
import { testPreset } from '@tessera/preset-test';
import { fmt, fmtRatio, median, parseArgs, table, target, targetLine, writeResults } from '../lib/common.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const targets = [];
const results = { suite: 'commands', quick };

// ------------------------------------------------------------------ 1 + 2: dispatch and autocomplete
const EXTRA_COMMANDS = 400;
const SKILLS = 100;
const extra = definePlugin({
  name: 'many-commands',
  contributes: [CommandContribution, SkillSourceContribution],
  register({ bind }) {
    bind(CommandContribution).toConstantValue({
      name: 'many',
      systemCommands: Array.from({ length: EXTRA_COMMANDS }, (_, index) => ({
        name: `${['deploy', 'review', 'format', 'lint', 'test', 'build', 'check', 'sync'][index % 8]}-${index}`,
        description: `command ${index}`,
        execute: () => ({ success: true, message: '' }),
      })),
    });
    bind(SkillSourceContribution).toConstantValue({
      name: 'many-skills',
      skills: () => Array.from({ length: SKILLS }, (_, index) => ({ id: `skill-${index}`, name: `skill-${index}`, description: `skill ${index}`, source: 'project' })),
    });
  },
});
const kernel = await createKernel({ plugins: testPreset({ turns: [], plugins: [...builtinCommands(), extra] }) });
const session = new InteractiveSession({ kernel, cwd: process.cwd() });
await session.whenReady();
const registry = await session.getCommandRegistry();
const names = registry.getCommands().map((command) => command.name);

function perCall(fn, calls) {
  const samples = [];
  for (let round = 0; round < (quick ? 5 : 21); round += 1) {
    const start = process.hrtime.bigint();
    for (let index = 0; index < calls; index += 1) fn(index);
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / calls);
  }
  return median(samples);
}
async function perCallAsync(fn, calls) {
  const samples = [];
  for (let round = 0; round < (quick ? 5 : 21); round += 1) {
    const start = process.hrtime.bigint();
    for (let index = 0; index < calls; index += 1) await fn(index);
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / calls);
  }
  return median(samples);
}

const cost = kernel.getAll(CommandContribution).flatMap((module) => module.systemCommands ?? []).find((command) => command.name === 'cost');
const hostStub = { sessionId: 's', cwd: '/', services: session.getSession().services, getHistory: () => [], getContextState: () => undefined, getModel: () => undefined, getCommandHostAdapters: () => ({}) };
await perCallAsync(() => session.executeCommand('cost'), 200);
const dispatchUs = await perCallAsync(() => session.executeCommand('cost'), quick ? 200 : 2000);
const directUs = await perCallAsync(() => cost.execute(hostStub, ''), quick ? 200 : 2000);

const prefixes = ['d', 'de', 'dep', 'depl', 'deplo', 'deploy', 'deploy-1', 'r', 're', 's', 'sk', 'skill-4', 'c', 'co', 'com', 'x'];
const queryUs = perCall((index) => registry.getCommands(prefixes[index % prefixes.length]), quick ? 2000 : 20000);
const naiveUs = perCall((index) => {
  const prefix = prefixes[index % prefixes.length];
  return names.filter((name) => name.startsWith(prefix));
}, quick ? 2000 : 20000);
await session.shutdown();
await kernel.shutdown();

console.log(`commands: ${names.length} palette entries (${EXTRA_COMMANDS} extra commands, ${SKILLS} skills, the built-in set)`);
console.log(
  table(
    ['measure', 'µs per call', 'baseline µs', 'ratio'],
    [
      ["executeCommand('cost') vs calling execute directly", fmt(dispatchUs, 2), fmt(directUs, 2), fmtRatio(dispatchUs / directUs)],
      ['autocomplete getCommands(prefix) vs a plain filter', fmt(queryUs, 2), fmt(naiveUs, 2), fmtRatio(queryUs / naiveUs)],
    ],
  ),
);
targets.push(target(`autocomplete over ${names.length} commands + skills, µs per keystroke query`, queryUs, 50));
Object.assign(results, { paletteEntries: names.length, dispatchUs, directUs, queryUs, naiveUs });

// ------------------------------------------------------------------ 3: skill discovery
const COUNT = 1000;
const root = mkdtempSync(join(tmpdir(), 'tessera-bench-skills-'));
try {
  const cwd = join(root, 'project');
  const folders = ['.tessera/skills', '.agents/skills', '.claude/skills'];
  for (let index = 0; index < COUNT; index += 1) {
    const name = `skill-${String(index).padStart(4, '0')}`;
    const body = `# ${name}\n\nRun the steps for $ARGUMENTS.\n\n${'Step text that makes the file a realistic size. '.repeat(20)}\n`;
    const dir = join(cwd, folders[index % folders.length], name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: Does task ${index} and reports what it found.\n---\n${body}`);
  }
  const home = join(root, 'home');
  mkdirSync(home);
  const cold = [];
  const cached = [];
  let found = 0;
  for (let run = 0; run < (quick ? 3 : 9); run += 1) {
    const source = new FolderSkillSource({ home });
    let start = performance.now();
    found = (await source.skills({ sessionId: 'bench', cwd })).length;
    cold.push(performance.now() - start);
    start = performance.now();
    await source.skills({ sessionId: 'bench', cwd });
    cached.push(performance.now() - start);
  }
  if (found !== COUNT) throw new Error(`discovered ${found} of ${COUNT} skills`);
  console.log(`\nskill discovery: ${COUNT} skills, cold scan median ${fmt(median(cold), 1)} ms (first ${fmt(cold[0], 1)} ms); cached call ${fmt(median(cached), 2)} ms`);
  targets.push(target(`skill discovery over ${COUNT} skills, cold, ms`, median(cold), 100));
  Object.assign(results, { skills: COUNT, discoveryColdMs: median(cold), discoveryCachedMs: median(cached) });
} finally {
  rmSync(root, { recursive: true, force: true });
}

for (const t of targets) console.log(targetLine(t));
writeResults('commands', { ...results, targets });
