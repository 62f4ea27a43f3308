import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeReleaseNotesAgent } from './describe-agent.js';

// The documents show the code as it is: the README's describe() block is the composition's,
// and every code block of the guide is an excerpt of a source file it names.

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = join(PACKAGE, '..', '..');

describe('the documents', () => {
  it("the README's describe() block is what the composition describes (npm run describe prints it)", async () => {
    const readme = readFileSync(join(PACKAGE, 'README.md'), 'utf8');
    const block = /<!-- describe:start -->\n```text\n([\s\S]*?)```\n<!-- describe:end -->/.exec(readme)?.[1];
    expect(block, 'README.md needs a ```text block between <!-- describe:start --> and <!-- describe:end -->').toBeDefined();
    expect(block).toBe(await describeReleaseNotesAgent());
  });

  it("every code block of the guide is a verbatim excerpt of the file its first line names", () => {
    const guide = readFileSync(join(ROOT, 'docs', 'guide', 'first-agent-product.md'), 'utf8');
    const blocks = [...guide.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks.length).toBeGreaterThan(5);
    for (const block of blocks) {
      const [first, ...rest] = block.split('\n');
      const source = /^\/\/ from (examples\/custom-agent\/src\/[\w.-]+\.ts)$/.exec(first!)?.[1];
      expect(source, `a guide code block does not name its source: ${first}`).toBeDefined();
      expect(readFileSync(join(ROOT, source!), 'utf8'), `not in ${source}:\n${rest.join('\n')}`).toContain(rest.join('\n'));
    }
  });
});
