import type { EditorTheme, MarkdownTheme, SelectListTheme } from '@mariozechner/pi-tui';

/** SGR wrappers. `NO_COLOR` (https://no-color.org) turns every one into the identity. */
const plain = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
const sgr = (open: number, close: number) => (text: string): string => (plain ? text : `\x1b[${open}m${text}\x1b[${close}m`);

export const style = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  italic: sgr(3, 23),
  underline: sgr(4, 24),
  strike: sgr(9, 29),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  blue: sgr(34, 39),
  magenta: sgr(35, 39),
  cyan: sgr(36, 39),
  gray: sgr(90, 39),
  accent: (text: string): string => (plain ? text : `\x1b[38;5;173m${text}\x1b[39m`),
  inverse: sgr(7, 27),
};

const KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue def default del do elif else enum export extends false ' +
    'finally fn for from func function go if impl import in interface is lambda let loop match mod mut new nil none not null ' +
    'or package pass private protected pub public raise return self static struct super switch this throw trait true try type ' +
    'typeof undefined use var void while with yield'
  ).split(' '),
);

/** One pass over a line: strings, comments, numbers and keywords coloured; everything else as is. */
const TOKEN = /(\/\/.*$|#(?![\w!]).*$|--\s.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][\w]*)/g;

/** A small, language-agnostic highlighter for fenced code (comments, strings, numbers, keywords). */
export function highlightCode(code: string): string[] {
  return code.split('\n').map((line) =>
    line.replace(TOKEN, (match, comment?: string, string?: string, number?: string, word?: string) => {
      if (comment) return style.gray(comment);
      if (string) return style.green(string);
      if (number) return style.yellow(number);
      if (word && KEYWORDS.has(word)) return style.magenta(word);
      return match;
    }),
  );
}

export const markdownTheme: MarkdownTheme = {
  heading: (text) => style.bold(style.accent(text)),
  link: (text) => style.underline(style.blue(text)),
  linkUrl: (text) => style.gray(text),
  code: (text) => style.cyan(text),
  codeBlock: (text) => text,
  codeBlockBorder: (text) => style.gray(text),
  quote: (text) => style.italic(text),
  quoteBorder: (text) => style.gray(text),
  hr: (text) => style.gray(text),
  listBullet: (text) => style.accent(text),
  bold: (text) => style.bold(text),
  italic: (text) => style.italic(text),
  strikethrough: (text) => style.strike(text),
  underline: (text) => style.underline(text),
  highlightCode: (code) => highlightCode(code),
};

export const selectListTheme: SelectListTheme = {
  selectedPrefix: (text) => style.accent(text),
  selectedText: (text) => style.bold(text),
  description: (text) => style.gray(text),
  scrollInfo: (text) => style.gray(text),
  noMatch: (text) => style.gray(text),
};

export const editorTheme: EditorTheme = {
  // pi-tui's editor colours its border one character at a time: plain keeps each frame small.
  borderColor: (text) => text,
  selectList: selectListTheme,
};
