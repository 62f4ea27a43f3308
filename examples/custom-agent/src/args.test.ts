import { describe, expect, it } from 'vitest';
import { parseRelnotesArgs, RelnotesUsageError } from './args.js';
import { defaultDatabasePath, relnotesPresetOptions } from './relnotes-options.js';

const io = { stdout: () => undefined, stderr: () => undefined, cwd: '/work/repo', home: '/home/ada', env: {} };
const demo = { kind: 'demo' as const };

describe('the relnotes command line', () => {
  it('reads the prompt from the words left over, with or without -p', () => {
    expect(parseRelnotesArgs(['-p', 'What changed?']).prompt).toBe('What changed?');
    expect(parseRelnotesArgs(['/release-notes', 'v1.0..HEAD', 'src']).prompt).toBe('/release-notes v1.0..HEAD src');
  });

  it('maps each flag to one preset option', () => {
    const defaults = relnotesPresetOptions(parseRelnotesArgs(['x']), io, demo);
    expect(defaults).toMatchObject({ cwd: '/work/repo', home: '/home/ada', database: defaultDatabasePath('/home/ada'), permissions: { allow: [] }, sessionLog: true });
    expect(defaults.database).toBe('/home/ada/.relnotes/sessions.db');
    expect(relnotesPresetOptions(parseRelnotesArgs(['--cwd', '../lib', 'x']), io, demo).cwd).toBe('/work/lib');
    expect(relnotesPresetOptions(parseRelnotesArgs(['--db', 'notes.db', 'x']), io, demo).database).toBe('/work/repo/notes.db');
    expect(relnotesPresetOptions(parseRelnotesArgs(['--allow', 'Read', '--allow', 'Bash(git show:*)', 'x']), io, demo).permissions).toEqual({ allow: ['Read', 'Bash(git show:*)'] });
    expect(relnotesPresetOptions(parseRelnotesArgs(['x']), { ...io, env: { TESSERA_SESSION_LOG: '0' } }, demo).sessionLog).toBe(false);
  });

  it('keeps the session flags for print mode', () => {
    expect(parseRelnotesArgs(['--model', 'haiku', '-r', 'abc', '--max-turns', '4', '--append-system-prompt', 'In German.', '--verbose', 'x'])).toEqual({
      prompt: 'x',
      model: 'haiku',
      resume: 'abc',
      continue: false,
      allow: [],
      appendSystemPrompt: 'In German.',
      maxTurns: 4,
      verbose: true,
      help: false,
    });
    expect(parseRelnotesArgs(['-c', 'x']).continue).toBe(true);
  });

  it('refuses what it cannot run, saying why', () => {
    expect(() => parseRelnotesArgs(['--max-turns', 'many', 'x'])).toThrow('--max-turns takes a positive whole number, got "many".');
    expect(() => parseRelnotesArgs(['-r', 'abc', '-c', 'x'])).toThrow('Use either --resume <id> or --continue, not both.');
    expect(() => parseRelnotesArgs(['--db'])).toThrow(RelnotesUsageError);
    expect(parseRelnotesArgs(['--help']).help).toBe(true);
  });
});
