import type { Tool } from '@tessera/contracts';

/**
 * `tools` with each one that `replacements` names swapped for its replacement (the last of a
 * name wins); replacements no tool names are added at the end, in order.
 */
export function replaceToolsByName(tools: readonly Tool[], replacements: readonly Tool[] | undefined): Tool[] {
  if (replacements === undefined || replacements.length === 0) return [...tools];
  const byName = new Map(replacements.map((tool) => [tool.name, tool]));
  const replaced = tools.map((tool) => {
    const replacement = byName.get(tool.name);
    if (replacement === undefined) return tool;
    byName.delete(tool.name);
    return replacement;
  });
  return [...replaced, ...byName.values()];
}

/** `tools` less those whose names `names` lists (a copy of `tools` when it lists none). */
export function removeToolsByName(tools: readonly Tool[], names: readonly string[] | undefined): Tool[] {
  if (names === undefined || names.length === 0) return [...tools];
  const removed = new Set(names);
  return tools.filter((tool) => !removed.has(tool.name));
}
