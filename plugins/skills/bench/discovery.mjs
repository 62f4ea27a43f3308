#!/usr/bin/env node
// Cold discovery of 1,000 generated skills (target ≤ 100 ms), and the up-to-date check a
// cached `skills()` call pays. Needs a build first: `npm run build` (or `npx tsc -b plugins/skills`).
// Usage: node plugins/skills/bench/discovery.mjs [--skills 1000] [--runs 7]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FolderSkillSource } from '../dist/index.js';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const count = argument('skills', 1000);
const runs = argument('runs', 7);
const target = 100;

const root = mkdtempSync(join(tmpdir(), 'tessera-skills-bench-'));
const cwd = join(root, 'project');
const home = join(root, 'home');
// Spread over the project folders and the command folder, like a real checkout.
const folders = ['.tessera/skills', '.agents/skills', '.claude/skills'];
for (let index = 0; index < count; index += 1) {
  const name = `skill-${String(index).padStart(4, '0')}`;
  const description = `Does task number ${index}, reads the files it is given and reports what it found. Use when the user asks for task ${index}.`;
  const body = `# ${name}\n\nRun the steps for $ARGUMENTS.\n\n${'Step text that makes the file a realistic size. '.repeat(20)}\n`;
  if (index % 10 === 9) {
    mkdirSync(join(cwd, '.claude/commands/group'), { recursive: true });
    writeFileSync(join(cwd, '.claude/commands/group', `${name}.md`), `---\ndescription: ${description}\nargument-hint: [path]\n---\n${body}`);
  } else {
    const dir = join(cwd, folders[index % folders.length], name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\nallowed-tools: Read, Grep\n---\n${body}`);
  }
}
mkdirSync(home, { recursive: true });

const session = { sessionId: 'bench', cwd };
const cold = [];
const warm = [];
let found = 0;
for (let run = 0; run < runs; run += 1) {
  const source = new FolderSkillSource({ home });
  let start = performance.now();
  found = source.skills(session).length;
  cold.push(performance.now() - start);
  start = performance.now();
  source.skills(session);
  warm.push(performance.now() - start);
}
rmSync(root, { recursive: true, force: true });

const median = (values) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
const format = (value) => `${value.toFixed(1)} ms`;
console.log(`skills discovered: ${found} of ${count}`);
console.log(`cold discovery: first ${format(cold[0])}, median ${format(median(cold))} over ${runs} runs (target ≤ ${target} ms)`);
console.log(`cached call (up-to-date check): median ${format(median(warm))}`);
if (found !== count) {
  console.error('not every generated skill was found');
  process.exitCode = 1;
} else if (median(cold) > target) {
  console.error(`median cold discovery is over the ${target} ms target`);
  process.exitCode = 1;
}
