import { readFileSync } from 'node:fs';
import type { Diagnostic } from '@tessera/contracts';
import { findJsonSyntaxError } from './json-error-position.js';

export type TextRead = { ok: true; value: string } | { ok: false; diagnostic: Diagnostic };

/** Reads a UTF-8 file; a failure becomes a located diagnostic instead of an exception. */
export function readTextFile(file: string): TextRead {
  try {
    return { ok: true, value: readFileSync(file, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'file not found'
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : code === 'EACCES'
            ? 'permission denied'
            : ((error as Error).message ?? String(error));
    return { ok: false, diagnostic: { severity: 'error', file, message: `Cannot read ${file}: ${reason}.` } };
  }
}

/** Parses JSON with a located error (1-based line and column) instead of an exception. */
export function parseJsonText(
  text: string,
  file: string,
): { ok: true; value: unknown } | { ok: false; diagnostic: Diagnostic } {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(source) };
  } catch (error) {
    const found = findJsonSyntaxError(source) ?? { offset: source.length, reason: (error as Error).message };
    const { line, column } = lineColumnAt(source, found.offset);
    return {
      ok: false,
      diagnostic: {
        severity: 'error',
        file,
        line,
        column,
        message: `Invalid JSON at line ${line}, column ${column}: ${found.reason}. Fix the syntax there (comments and trailing commas are not allowed).`,
      },
    };
  }
}

/** 1-based line and column of a character offset. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let index = 0; index < end; index += 1) {
    if (text.charCodeAt(index) === 10) {
      line += 1;
      lineStart = index + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
