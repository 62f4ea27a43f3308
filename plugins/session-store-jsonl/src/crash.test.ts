import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSessionFile } from './session-loader.js';
import { SessionManager } from './session-manager.js';
import { FileSessionStorage } from './file-session-storage.js';

// The child runs the built package (plain node cannot load the TypeScript sources);
// `npm test` builds before testing.
const distEntry = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const TRIALS = 200;
const PARALLEL = 8;

const CHILD = `
const { SessionManager } = await import(process.argv[1]);
const session = SessionManager.create('/crash', { agentDir: process.argv[2], terminalId: null, onWarning() {} });
process.stdout.write('FILE ' + session.getSessionFile() + '\\n');
let count = 0;
const append = () => {
  const text = 'm' + count;
  session.appendMessage(count % 2 ? { role: 'assistant', content: [{ type: 'text', text }] } : { role: 'user', content: text });
  count += 1;
};
append();
for (;;) {
  const burst = 1 + Math.floor(Math.random() * 20);
  for (let k = 0; k < burst; k += 1) append();
  if (Math.random() < 0.05) session.setSessionName('name ' + count);
  await session.flush();
  process.stdout.write('ACK ' + count + '\\n');
}
`;

interface Trial {
  file: string | undefined;
  acknowledged: number;
}

function runTrial(agentDir: string): Promise<Trial> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, pathToFileURL(distEntry).href, agentDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    let timer: NodeJS.Timeout | undefined;
    // Half the kills are timed from the file's creation, half from the first acknowledged flush,
    // so some land before any flush and some after, however slow the machine is at the moment.
    const startOn = Math.random() < 0.5 ? 'FILE ' : 'ACK ';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (timer === undefined && output.includes(startOn)) {
        timer = setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 40));
      }
    });
    child.on('error', reject);
    child.on('close', () => {
      const file = /FILE (.+)\n/.exec(output)?.[1];
      const acks = [...output.matchAll(/ACK (\d+)\n/g)].map((match) => Number(match[1]));
      resolve({ file, acknowledged: acks.at(-1) ?? 0 });
    });
  });
}

describe.skipIf(!existsSync(distEntry))('crash safety (SIGKILL while appending)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-crash-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it(`loses no flushed entry and leaves no unreadable file over ${TRIALS} kills`, { timeout: 180_000 }, async () => {
    const results: Trial[] = [];
    for (let start = 0; start < TRIALS; start += PARALLEL) {
      const batch = Array.from({ length: Math.min(PARALLEL, TRIALS - start) }, (_, index) => runTrial(join(root, `t${start + index}`)));
      results.push(...(await Promise.all(batch)));
    }
    let withData = 0;
    for (const trial of results) {
      expect(trial.file).toBeDefined();
      const file = trial.file as string;
      const load = await readSessionFile(new FileSessionStorage(), file);
      // A kill between creating the file and its first write leaves it empty: every reader takes that for no session.
      if (load.status === 'missing' || load.status === 'empty') {
        expect(trial.acknowledged).toBeLessThan(2);
        continue;
      }
      expect(load.status).toBe('ok');
      const warnings: string[] = [];
      const session = await SessionManager.open(file, { agentDir: join(root, 'verify'), terminalId: null, onWarning: (message) => warnings.push(message) });
      const texts = session.getEntries().map((entry) => {
        if (entry.type !== 'message') return undefined;
        const content = entry.message.content as string | { text: string }[];
        return typeof content === 'string' ? content : content[0]?.text;
      });
      expect(texts.length).toBeGreaterThanOrEqual(trial.acknowledged);
      expect(texts).toEqual(texts.map((_, index) => `m${index}`));
      expect(warnings.every((warning) => warning.includes('torn write'))).toBe(true);
      expect((await readdir(dirname(file))).filter((name) => name.includes('.corrupt-'))).toEqual([]);
      if (trial.acknowledged > 0) withData += 1;
    }
    // The kills must land at different moments, including after some flushes.
    expect(withData).toBeGreaterThan(TRIALS / 4);
  });
});
