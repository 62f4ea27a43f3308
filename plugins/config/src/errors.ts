import { TesseraError, type Diagnostic } from '@tessera/contracts';

/**
 * A settings layer failed in a way that could hide deny or ask rules. Loading stops instead
 * of running with a weaker policy than the files state. `diagnostics` locate the problem.
 */
export class SettingsPolicyError extends TesseraError {
  readonly diagnostics: readonly Diagnostic[];

  constructor(file: string, diagnostics: readonly Diagnostic[], reason: string) {
    const first = diagnostics[0];
    const where = first?.line !== undefined ? `${file}:${first.line}:${first.column ?? 1}` : file;
    super(
      `Refusing to load settings: ${where} — ${reason}. Fix the file (or move it away) so its permission rules can be read.` +
        (first ? `\n  ${first.message}` : ''),
      { code: 'settings_policy_unreadable', category: 'configuration', recoverable: false, details: { file, diagnostics } },
    );
    this.diagnostics = diagnostics;
  }
}
