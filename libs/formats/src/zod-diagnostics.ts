import type { Diagnostic } from '@tessera/contracts';
import type { z } from 'zod';

/** Renders a zod issue path as `permissions.deny[2]` / `mcpServers["my server"].url`. */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let text = prefix;
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$-]*$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** One error diagnostic per zod issue, each naming the file and the JSON path to fix. */
export function zodDiagnostics(error: z.ZodError, file: string, prefix = '', what = 'value'): Diagnostic[] {
  return error.issues.map((issue) => {
    const path = formatPath(issue.path, prefix);
    return {
      severity: 'error',
      file,
      path: path === '' ? '(root)' : path,
      message: `Invalid ${what} at ${path === '' ? 'the top level' : `\`${path}\``}: ${issue.message}.`,
    } satisfies Diagnostic;
  });
}
