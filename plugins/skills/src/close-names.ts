/**
 * Up to `limit` of `candidates` that look like `name`: a case-insensitive match, a prefix or
 * substring either way, or an edit distance of at most a third of the name (at least 1).
 * Closest first.
 */
export function closeNames(name: string, candidates: readonly string[], limit = 5): string[] {
  const wanted = name.toLowerCase();
  const allowed = Math.max(1, Math.floor(wanted.length / 3));
  const scored: { name: string; score: number }[] = [];
  for (const candidate of new Set(candidates)) {
    const lower = candidate.toLowerCase();
    let score: number;
    if (lower === wanted) score = 0;
    else if (lower.startsWith(wanted) || wanted.startsWith(lower)) score = 1;
    else if (lower.includes(wanted) || wanted.includes(lower)) score = 2;
    else {
      const distance = editDistance(wanted, lower);
      if (distance > allowed) continue;
      score = 2 + distance;
    }
    scored.push({ name: candidate, score });
  }
  return scored
    .sort((left, right) => left.score - right.score || (left.name < right.name ? -1 : 1))
    .slice(0, limit)
    .map((item) => item.name);
}

/** Levenshtein distance, two rows. */
function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row += 1) {
    const next = [row];
    for (let column = 1; column <= right.length; column += 1) {
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      next[column] = Math.min(next[column - 1]! + 1, previous[column]! + 1, previous[column - 1]! + cost);
    }
    previous = next;
  }
  return previous[right.length]!;
}
