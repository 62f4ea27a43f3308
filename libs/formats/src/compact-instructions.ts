const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/**
 * The body of a "Compact Instructions" section (any heading level, case-insensitive), up to the
 * next heading of the same or a higher level; undefined when absent or empty.
 */
export function extractCompactInstructions(markdown: string): string | undefined {
  const lines = markdown.split(/\r?\n/);
  let level = 0;
  const collected: string[] = [];
  let inFence = false;
  for (const line of lines) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : HEADING.exec(line);
    if (level === 0) {
      if (heading && heading[2]!.toLowerCase() === 'compact instructions') level = heading[1]!.length;
      continue;
    }
    if (heading && heading[1]!.length <= level) break;
    collected.push(line);
  }
  const text = collected.join('\n').trim();
  return text === '' ? undefined : text;
}
