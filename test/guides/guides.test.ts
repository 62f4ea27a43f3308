import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Guides never drift from the code: every TypeScript, JavaScript or JSON block in docs/guide/ is
// an excerpt of a file that is built and tested (an example's source). The block names it — a
// first line `// from <path>` (code), or an HTML comment `<!-- from <path> -->` on the line
// before the fence (JSON) — and must appear in that file verbatim (leading indentation ignored).
// Shell and text blocks are commands and output, not checked here.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDES = join(ROOT, 'docs', 'guide');
const CHECKED = new Set(['ts', 'tsx', 'typescript', 'js', 'mjs', 'javascript', 'json', 'jsonc']);

interface Block {
  guide: string;
  line: number;
  lang: string;
  source: string | undefined;
  body: string;
}

export function codeBlocks(guide: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[index]!);
    if (!open) continue;
    const lang = open[2]!.toLowerCase();
    const start = index;
    const body: string[] = [];
    for (index += 1; index < lines.length && !/^\s*```\s*$/.test(lines[index]!); index++) body.push(lines[index]!);
    const before = /<!--\s*from\s+(\S+)\s*-->/.exec(lines[start - 1] ?? '')?.[1];
    const marker = /^\s*\/\/\s*from\s+(\S+)/.exec(body[0] ?? '')?.[1];
    blocks.push({ guide, line: start + 1, lang, source: marker ?? before, body: (marker ? body.slice(1) : body).join('\n') });
  }
  return blocks;
}

const normalise = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^(\/\/|\/\*|\*)\s*…/.test(line) && line !== '// …' && line !== '…')
    .join('\n');

const guides = existsSync(GUIDES) ? readdirSync(GUIDES).filter((name) => name.endsWith('.md')) : [];

describe('guides', () => {
  it('are there', () => {
    expect(guides.length).toBeGreaterThan(0);
  });
  for (const guide of guides) {
    const blocks = codeBlocks(guide, readFileSync(join(GUIDES, guide), 'utf8')).filter((block) => CHECKED.has(block.lang));
    for (const block of blocks) {
      it(`${guide}:${block.line} (${block.lang}) is an excerpt of a tested file`, () => {
        expect(block.source, `${guide}:${block.line}: name the file this block comes from (// from <path> as its first line, or <!-- from <path> --> before a JSON block)`).toBeDefined();
        const file = join(ROOT, block.source!);
        expect(existsSync(file), `${guide}:${block.line}: ${block.source} does not exist`).toBe(true);
        // An excerpt may skip lines (marked "…"); each run of kept lines must be in the file, in order.
        const source = normalise(readFileSync(file, 'utf8'));
        const pieces = block.body.split(/\n\s*(?:\/\/\s*)?…\s*\n/).map(normalise).filter((piece) => piece !== '');
        let from = 0;
        for (const piece of pieces) {
          const at = source.indexOf(piece, from);
          expect(at, `${guide}:${block.line}: this part is not in ${block.source} (or is out of order):\n${piece}`).toBeGreaterThanOrEqual(0);
          from = at + piece.length;
        }
      });
    }
  }
});
