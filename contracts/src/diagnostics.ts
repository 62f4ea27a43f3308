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
