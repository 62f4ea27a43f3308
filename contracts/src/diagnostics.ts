import { createToken } from './token.js';

/** A located finding about a file Tessera read. Readers never throw on bad content; they report. */
export interface Diagnostic {
  severity: 'error' | 'warning' | 'info';
  /** Absolute path of the file concerned. */
  file: string;
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
  /** JSON path / frontmatter key, e.g. `permissions.deny[2]`. */
  path?: string;
  /** What is wrong and what to do about it. */
  message: string;
}

/** What every file reader returns: the value it could build, and what it found on the way. */
export interface ParseResult<T> {
  value: T;
  diagnostics: Diagnostic[];
}

/**
 * Something a plugin wants a person to know outside any file: a skipped agent definition, a
 * hook config problem, a failed log write, a shutdown error. Where it goes is the host's
 * choice (a TUI's status line, a server's log, stderr), made by binding `Diagnostics`.
 */
export interface DiagnosticReport {
  severity: 'error' | 'warning' | 'info';
  /** Stable, machine-readable (`TESSERA_HOOKS_CONFIG`, `TESSERA_AGENT_DEFINITION`, …). */
  code: string;
  message: string;
  /** The plugin or subsystem that reports. */
  source?: string;
  /** The file concerned, when there is one. */
  file?: string;
  line?: number;
  path?: string;
}

/** Receives diagnostic reports; bound to {@link Diagnostics}. */
export interface DiagnosticsReporter {
  /** Delivers one report. Must not throw: callers report from error paths. */
  report(report: DiagnosticReport): void;
}

/**
 * The kernel binds a reporter that turns warnings and errors into Node process warnings
 * (`process.emitWarning`, so `--no-warnings` and `process.on('warning')` keep working) when no
 * plugin provides one.
 */
export const Diagnostics = createToken<DiagnosticsReporter>('Diagnostics');

/** The default reporter: warnings and errors become process warnings; infos are dropped. */
export const processWarningDiagnostics: DiagnosticsReporter = Object.freeze({
  report({ severity, code, message, file, line }: DiagnosticReport): void {
    if (severity === 'info') return;
    const where = file === undefined ? '' : `${file}${line === undefined ? '' : `:${line}`}: `;
    process.emitWarning(`${where}${message}`, { code });
  },
});

/** A `Diagnostic` (a finding about a file) as a report with a code. */
export function diagnosticReport(diagnostic: Diagnostic, code: string, source?: string): DiagnosticReport {
  return {
    severity: diagnostic.severity,
    code,
    message: diagnostic.path === undefined ? diagnostic.message : `${diagnostic.path}: ${diagnostic.message}`,
    file: diagnostic.file,
    ...(diagnostic.line === undefined ? {} : { line: diagnostic.line }),
    ...(diagnostic.path === undefined ? {} : { path: diagnostic.path }),
    ...(source === undefined ? {} : { source }),
  };
}
