/**
 * The per-handler `if` field: one permission rule (`Bash(git *)`, `Edit(*.ts)`) that must
 * match the tool call for the handler to run. For Bash each subcommand is tried (including
 * `$( … )` and backtick bodies); text that cannot be split is matched as a whole (fails open).
 */
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function wildcard(pattern: string, bash: boolean): RegExp {
  let body = pattern.trim();
  let tail = '';
  if (bash && (body.endsWith(':*') || body.endsWith(' *'))) {
    body = body.slice(0, -2);
    tail = '(?: .*)?';
  }
  return new RegExp(`^${body.split('*').map(escapeRegExp).join('.*')}${tail}$`, 's');
}

function subcommands(command: string): string[] {
  const inner = [...command.matchAll(/\$\(([^()]*)\)|`([^`]*)`/g)].map((match) => match[1] ?? match[2] ?? '');
  return [command, ...inner]
    .flatMap((text) => text.split(/&&|\|\||[;|&\n]/))
    .map((part) => part.trim().replace(/\s+/g, ' '))
    .filter(Boolean);
}

export function matchesIfCondition(rule: string, toolName: string, input: unknown): boolean {
  const open = rule.indexOf('(');
  const tool = (open === -1 ? rule : rule.slice(0, open)).trim();
  const normalize = (name: string): string => (name === 'Task' ? 'Agent' : name);
  if (normalize(tool) !== normalize(toolName) && !(tool === 'Edit' && ['Write', 'MultiEdit', 'NotebookEdit'].includes(toolName))) return false;
  if (open === -1 || !rule.trimEnd().endsWith(')')) return true;
  const spec = rule.trim().slice(open + 1, -1);
  if (spec === '' || spec === '*') return true;
  const record = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  if (toolName === 'Bash') {
    const command = typeof record.command === 'string' ? record.command : '';
    const regex = wildcard(spec, true);
    return subcommands(command).some((part) => regex.test(part));
  }
  const value = [record.file_path, record.filePath, record.path, record.url, record.subagent_type, record.pattern].find(
    (candidate): candidate is string => typeof candidate === 'string',
  );
  if (value === undefined) return true;
  const regex = wildcard(spec.replace(/^domain:/, ''), false);
  const base = value.slice(value.lastIndexOf('/') + 1);
  return regex.test(value) || regex.test(base) || (spec.startsWith('domain:') && regex.test(safeHost(value)));
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
