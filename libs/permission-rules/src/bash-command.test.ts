import { describe, expect, it } from 'vitest';
import { parseBashCommand } from './bash-command.js';
import { analyzeBashCommand } from './command-forms.js';

const commands = (text: string): string[] => analyzeBashCommand(text).commands.map((command) => command.allowForm);

describe('parseBashCommand', () => {
  it('splits on every operator and keeps quoted operators inside words', () => {
    expect(commands('a && b || c; d | e |& f & g\nh')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    expect(commands(`echo "a && b" 'c; d' e\\;f`)).toEqual([`echo "a && b" 'c; d' e\\;f`]);
  });

  it('finds commands inside substitutions, subshells and shell -c strings', () => {
    expect(commands('echo $(date) `whoami` <(ls) && (cd x; make)')).toEqual(['date', 'whoami', 'ls', 'echo $(date) `whoami` <(ls)', 'cd x', 'make']);
    expect(commands(`bash -c 'npm test && npm run lint'`)).toEqual([`bash -c 'npm test && npm run lint'`, 'npm test', 'npm run lint']);
  });

  it('treats a quoted here-document body as data and an unquoted one as a place for substitutions', () => {
    expect(commands("git commit -m \"$(cat <<'EOF'\nfix: rm the thing\nEOF\n)\"")).toEqual(['cat', 'git commit -m "$(cat <<\'EOF\'\nfix: rm the thing\nEOF\n)"']);
    expect(commands('cat <<EOF\n$(id)\nEOF')).toEqual(['cat', 'id']);
  });

  it('records redirections and ignores fd duplication', () => {
    expect(parseBashCommand('cmd > out.txt 2>&1 < in.txt 2>> err.log').redirects).toEqual([
      { direction: 'out', target: 'out.txt', pattern: 'out.txt' },
      { direction: 'in', target: 'in.txt', pattern: 'in.txt' },
      { direction: 'out', target: 'err.log', pattern: 'err.log' },
    ]);
  });

  it('reads `>& file` and `>&file` as an output to the file, and `>&2`, `>&-` as fd duplication', () => {
    expect(parseBashCommand('echo hi >& out.txt').redirects).toEqual([{ direction: 'out', target: 'out.txt', pattern: 'out.txt' }]);
    expect(parseBashCommand('echo hi >&/etc/x 2>&1 >&2 >&- 3>&1-').redirects).toEqual([{ direction: 'out', target: '/etc/x', pattern: '/etc/x' }]);
    expect(parseBashCommand('cat <<< "data"').redirects).toEqual([]);
  });

  it("reads ANSI-C quoting $'…' with its escapes, and $\"…\" without the $", () => {
    expect(commands("echo $'\\'';rm -rf x;#'")).toEqual(["echo $'\\''", 'rm -rf x']);
    expect(parseBashCommand("$'\\x72m' $'a\\tb' $\"rm\"").subcommands[0]!.words.map((word) => word.value)).toEqual(['rm', 'a\tb', 'rm']);
    expect(parseBashCommand("echo $'\\cA'").complete).toBe(false);
    expect(parseBashCommand("echo $'abc").complete).toBe(false);
  });

  it("reads $$'…' as the PID followed by a plain single-quoted string, not as $'…'", () => {
    const names = (text: string): string[] => analyzeBashCommand(text).commands.map((command) => command.name);
    expect(commands("echo $$'\\';rm -rf ~;#'")).toEqual(["echo $$'\\'", 'rm -rf ~']);
    expect(names("echo $(echo $$'\\'; rm -rf x; echo ')')")).toContain('rm');
    // Inside `$(…)` the substitution ends at the first `)`, so the `ls` after it is read as written.
    expect(commands("echo $(echo $$'\\') && ls ')'")).toEqual(["echo $$'\\'", "echo $(echo $$'\\')", "ls ')'"]);
    expect(parseBashCommand("echo $(echo $$'\\') && ls ')'").complete).toBe(true);
    expect(commands("echo \\$'\\';rm -rf x;#'")).toEqual(["echo \\$'\\'", 'rm -rf x']);
  });

  it('drops line continuations inside words', () => {
    expect(parseBashCommand('r\\\nm -rf x').subcommands[0]!.words.map((word) => word.value)).toEqual(['rm', '-rf', 'x']);
  });

  it('keeps unquoted expansion characters in the pattern and escapes quoted ones', () => {
    const patterns = (text: string): string[] => parseBashCommand(text).subcommands[0]!.words.map((word) => word.pattern);
    expect(patterns(`cat .en? "a*" 'b{c,d}' \\* "$HOME/x" '$HOME'`)).toEqual(['cat', '.en?', 'a\\*', 'b\\{c\\,d\\}', '\\*', '$HOME/x', '\\$HOME']);
  });

  it('strips coproc and time -p, and unwraps trap actions, env -S strings and wrappers named by path', () => {
    const names = (text: string): string[] => analyzeBashCommand(text).commands.map((command) => command.name);
    expect(names('coproc rm x')).toEqual(['rm']);
    expect(names('time -p rm x')).toEqual(['rm']);
    expect(names("trap 'rm -rf x' EXIT")).toEqual(['trap', 'rm']);
    expect(names('trap - EXIT')).toEqual(['trap']);
    expect(names("env -S'rm x'")).toContain('rm');
    expect(names('env --split-string="rm x" y')).toContain('rm');
    expect(names("env -u FOO -S 'rm -rf x'")).toContain('rm');
    expect(names("env -C . -S 'rm -rf x'")).toContain('rm');
    expect(names("env -iu FOO --unset BAR --chdir /tmp -S 'rm -rf x'")).toContain('rm');
    expect(names('/usr/bin/env rm x')).toEqual(['rm']);
  });

  it('marks unterminated quotes and substitutions as incomplete', () => {
    expect(parseBashCommand('echo "abc').complete).toBe(false);
    expect(parseBashCommand("echo 'abc").complete).toBe(false);
    expect(parseBashCommand('echo $(ls').complete).toBe(false);
    expect(parseBashCommand('cat <<EOF\nno end').complete).toBe(false);
    expect(parseBashCommand('echo ok').complete).toBe(true);
  });

  it('exposes deny forms: unquoted, wrapper-stripped and by basename', () => {
    const [forms] = analyzeBashCommand("sudo -u root FOO=1 /bin/'rm' -rf /").commands;
    expect(forms!.denyForms).toContain('rm -rf /');
    expect(forms!.name).toBe('rm');
    expect(analyzeBashCommand('FOO=1 PATH=/x npm test').commands[0]!.allowForm).toBe('PATH=/x npm test');
  });
});
