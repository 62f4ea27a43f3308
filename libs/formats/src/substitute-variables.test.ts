import { describe, expect, it } from 'vitest';
import { applyShellOutputs, preprocessShellCommands } from './shell-commands.js';
import { splitArguments, substituteVariables, type SkillPromptContext } from './substitute-variables.js';

const context: SkillPromptContext = {
  arguments: 'src/a.ts "two words" third',
  argumentNames: ['file', 'title'],
  sessionId: 'sess-1',
  skillDir: '/skills/fix',
  projectDir: '/repo',
  pluginRoot: '/plugins/p',
  pluginData: '/data/p',
  effort: 'high',
  appendArgumentsWhenUnused: false,
};

describe('substituteVariables', () => {
  it.each([
    ['$ARGUMENTS', 'src/a.ts "two words" third'],
    ['[$ARGUMENTS[0]] [$ARGUMENTS[1]] [$ARGUMENTS[2]]', '[src/a.ts] [two words] [third]'],
    ['$ARGUMENTS[7]', '$ARGUMENTS[7]'],
    ['$0 $1 $2', 'src/a.ts two words third'],
    ['$3 stays', '$3 stays'],
    ['$file / $title', 'src/a.ts / two words'],
    ['$HOME and $PATH', '$HOME and $PATH'],
    ['cost \\$5 and \\$ARGUMENTS', 'cost $5 and $ARGUMENTS'],
    ['${CLAUDE_SESSION_ID}', 'sess-1'],
    ['${CLAUDE_SKILL_DIR}/run.sh', '/skills/fix/run.sh'],
    ['${CLAUDE_PROJECT_DIR}', '/repo'],
    ['${CLAUDE_PLUGIN_ROOT}', '/plugins/p'],
    ['${CLAUDE_PLUGIN_DATA}', '/data/p'],
    ['${CLAUDE_EFFORT}', 'high'],
    ['${TESSERA_SESSION_ID} ${TESSERA_PLUGIN_ROOT}', 'sess-1 /plugins/p'],
    ['${OTHER_VAR}', '${OTHER_VAR}'],
    ['$ARGUMENTSX', '$ARGUMENTSX'],
    ['$1abc', '$1abc'],
  ])('%s → %s', (body, expected) => {
    expect(substituteVariables(body, context)).toBe(expected);
  });

  it('supports the legacy 1-based $N when asked', () => {
    expect(substituteVariables('$1 $2 $0', { ...context, positionalBase: 1 })).toBe('src/a.ts two words $0');
  });

  it('handles missing arguments', () => {
    expect(substituteVariables('[$ARGUMENTS] [$0] [$file]', { argumentNames: ['file'] })).toBe('[] [$0] []');
  });

  it('leaves ${CLAUDE_*} literal when the context has no value (the shell may expand it)', () => {
    expect(substituteVariables('${CLAUDE_PLUGIN_ROOT}/x', {})).toBe('${CLAUDE_PLUGIN_ROOT}/x');
  });

  it('appends ARGUMENTS when the body uses no argument placeholder', () => {
    expect(substituteVariables('Do it.', { arguments: 'now' })).toBe('Do it.\n\nARGUMENTS: now');
    expect(substituteVariables('Do it.\n', { arguments: 'now' })).toBe('Do it.\n\nARGUMENTS: now');
    expect(substituteVariables('Do it.', { arguments: 'now', appendArgumentsWhenUnused: false })).toBe('Do it.');
    expect(substituteVariables('Do $0.', { arguments: 'now' })).toBe('Do now.');
    expect(substituteVariables('Do it.', { arguments: '  ' })).toBe('Do it.');
  });

  it('never rescans substituted text', () => {
    expect(substituteVariables('$ARGUMENTS', { arguments: '$1 ${CLAUDE_SESSION_ID}', sessionId: 'x' })).toBe('$1 ${CLAUDE_SESSION_ID}');
  });
});

describe('splitArguments', () => {
  it.each([
    ['a b  c', ['a', 'b', 'c']],
    [`"a b" 'c d' e\\ f`, ['a b', 'c d', 'e f']],
    ['"say \\"hi\\"" x', ['say "hi"', 'x']],
    ['"" x', ['', 'x']],
    ['"unterminated words', ['unterminated words']],
    ['', []],
  ])('%s', (input, expected) => {
    expect(splitArguments(input)).toEqual(expected);
  });
});

describe('preprocessShellCommands', () => {
  it('finds inline commands at line start or after whitespace only', () => {
    const body = '!`git status`\nBranch: !`git branch --show-current` and a!`not this` or `!not` either';
    const commands = preprocessShellCommands(body);
    expect(commands.map((c) => [c.command, c.kind, c.line, c.column])).toEqual([
      ['git status', 'inline', 1, 1],
      ['git branch --show-current', 'inline', 2, 9],
    ]);
    for (const command of commands) expect(body.slice(command.start, command.end)).toBe(`!\`${command.command}\``);
  });

  it('finds fenced ```! blocks with their extent and skips inline syntax inside them', () => {
    const body = 'Intro\n```!\necho one\n!`echo two`\n```\nAfter';
    const [block, ...rest] = preprocessShellCommands(body);
    expect(rest).toEqual([]);
    expect(block).toMatchObject({ kind: 'block', command: 'echo one\n!`echo two`', line: 2, column: 1 });
    expect(applyShellOutputs(body, [block!], ['OUT'])).toBe('Intro\nOUT\nAfter');
  });

  it('treats an unclosed block as running to the end', () => {
    const [block] = preprocessShellCommands('```!\nls\n');
    expect(block).toMatchObject({ kind: 'block', command: 'ls' });
  });

  it('replaces commands with outputs in order', () => {
    const body = 'A !`one` B !`two` C';
    expect(applyShellOutputs(body, preprocessShellCommands(body), ['1', '2'])).toBe('A 1 B 2 C');
  });

  it('returns nothing for plain text', () => {
    expect(preprocessShellCommands('no commands here, just `code`')).toEqual([]);
  });
});
