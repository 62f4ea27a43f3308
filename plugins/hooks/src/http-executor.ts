import type { HttpHookHandler } from '@tessera/contracts';
import type { ProcessOutcome } from './command-executor.js';

/** `$VAR` / `${VAR}` in header values, only for names in `allowedEnvVars`; others become empty. */
export function interpolateHeaders(
  headers: Record<string, string> | undefined,
  allowed: readonly string[] | undefined,
  env: Record<string, string | undefined>,
): Record<string, string> {
  const permitted = new Set(allowed ?? []);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    out[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, braced?: string, bare?: string) => {
      const key = (braced ?? bare)!;
      return permitted.has(key) ? (env[key] ?? '') : '';
    });
  }
  return out;
}

/**
 * POSTs the input JSON. A 2xx body is read like a command's stdout (exit 0). Non-2xx,
 * network errors and timeouts never block: they come back as exit 1 with a notice.
 */
export async function runHttpHook(
  handler: HttpHookHandler,
  input: string,
  options: { timeoutMs: number; signal?: AbortSignal; env?: Record<string, string | undefined> },
): Promise<ProcessOutcome> {
  const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
  try {
    const response = await fetch(handler.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...interpolateHeaders(handler.headers, handler.allowedEnvVars, options.env ?? process.env) },
      body: input,
      signal: AbortSignal.any(signals),
      redirect: 'error',
    });
    const body = await response.text();
    if (response.ok) return { exitCode: 0, stdout: body, stderr: '' };
    return { exitCode: 1, stdout: '', stderr: `HTTP ${response.status} from ${handler.url}` };
  } catch (error) {
    const timedOut = signals[0]!.aborted;
    return { exitCode: 1, stdout: '', stderr: `${handler.url}: ${timedOut ? 'timed out' : (error as Error).message}`, ...(timedOut ? { timedOut } : {}) };
  }
}
