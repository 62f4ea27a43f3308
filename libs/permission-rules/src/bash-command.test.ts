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
      { direction: 'out', target: 'out.txt' },
      { direction: 'in', target: 'in.txt' },
      { direction: 'out', target: 'err.log' },
    ]);
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
