/** Throws `fail(problem)` unless `root` is an absolute POSIX path (a sandbox workspace root). */
export function checkSandboxRoot(root: unknown, fail: (problem: string) => Error): asserts root is string {
  if (typeof root !== 'string' || !root.startsWith('/')) throw fail(`must be an absolute path inside the sandbox (got ${JSON.stringify(root)})`);
}
