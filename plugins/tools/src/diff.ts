/** One hunk of a unified diff, the shape UIs render (like `diff`'s structuredPatch). */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Each line prefixed with ' ', '-' or '+'. */
  lines: string[];
}

type Op = { kind: ' ' | '-' | '+'; text: string };

/** Above this many cells the middle is shown as a plain remove-then-add (keeps memory bounded). */
const MAX_LCS_CELLS = 4_000_000;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function middleOps(before: string[], after: string[]): Op[] {
  const n = before.length;
  const m = after.length;
  if (n * m > MAX_LCS_CELLS) {
    return [...before.map((text): Op => ({ kind: '-', text })), ...after.map((text): Op => ({ kind: '+', text }))];
  }
  // Longest common subsequence table, filled from the end so the walk below goes forwards.
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[i * width + j] =
        before[i] === after[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      ops.push({ kind: ' ', text: before[i]! });
      i += 1;
      j += 1;
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) {
      ops.push({ kind: '-', text: before[i]! });
      i += 1;
    } else {
      ops.push({ kind: '+', text: after[j]! });
      j += 1;
    }
  }
  while (i < n) ops.push({ kind: '-', text: before[i++]! });
  while (j < m) ops.push({ kind: '+', text: after[j++]! });
  return ops;
}

/** Line diff of two texts as hunks with `context` unchanged lines around each change. */
export function structuredPatch(oldText: string, newText: string, context = 3): DiffHunk[] {
  const before = splitLines(oldText);
  const after = splitLines(newText);
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix += 1;
  let suffix = 0;
  while (
    suffix < before.length - prefix &&
    suffix < after.length - prefix &&
    before[before.length - 1 - suffix] === after[after.length - 1 - suffix]
  ) {
    suffix += 1;
  }
  const ops: Op[] = [
    ...before.slice(0, prefix).map((text): Op => ({ kind: ' ', text })),
    ...middleOps(before.slice(prefix, before.length - suffix), after.slice(prefix, after.length - suffix)),
    ...before.slice(before.length - suffix).map((text): Op => ({ kind: ' ', text })),
  ];

  // Line numbers (1-based) each op starts at, in the old and the new text.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const op of ops) {
    oldAt.push(oldLine);
    newAt.push(newLine);
    if (op.kind !== '+') oldLine += 1;
    if (op.kind !== '-') newLine += 1;
  }
  // Changes closer than two contexts apart share a hunk.
  const groups: Array<[number, number]> = [];
  ops.forEach((op, index) => {
    if (op.kind === ' ') return;
    const last = groups[groups.length - 1];
    if (last && index - last[1] - 1 <= context * 2) last[1] = index;
    else groups.push([index, index]);
  });
  const hunks: DiffHunk[] = [];
  for (const [first, last] of groups) {
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length - 1, last + context);
    const slice = ops.slice(from, to + 1);
    hunks.push({
      oldStart: oldAt[from]!,
      oldLines: slice.filter((op) => op.kind !== '+').length,
      newStart: newAt[from]!,
      newLines: slice.filter((op) => op.kind !== '-').length,
      lines: slice.map((op) => `${op.kind}${op.text}`),
    });
  }
  return hunks;
}
