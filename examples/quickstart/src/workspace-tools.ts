import { mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { defineTool } from '@tessera/kernel';

/** Resolves `path` inside `root`, refusing anything that escapes it (`..`, absolute paths, symlinks). */
async function inside(root: string, path: string): Promise<string> {
  const base = await realpath(root);
  const target = resolve(base, path);
  let real = target;
  try {
    real = await realpath(target);
  } catch {
    real = resolve(await realpath(dirname(target)).catch(() => dirname(target)), target.slice(dirname(target).length + 1));
  }
  const offset = relative(base, real);
  if (offset.startsWith('..') || isAbsolute(offset)) throw new Error(`"${path}" is outside the workspace`);
  return real;
}

/** Three small file tools confined to one folder: enough for the demo agent's task. */
export function workspaceTools(root: string) {
  const listFiles = defineTool({
    name: 'list_files',
    description: 'Lists the files in the workspace.',
    inputSchema: z.object({}),
    async execute() {
      const names = (await readdir(root, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name).sort();
      return { success: true, output: names.join('\n'), data: { names } };
    },
  });
  const readTextFile = defineTool({
    name: 'read_file',
    description: 'Reads a text file of the workspace.',
    inputSchema: z.object({ file_path: z.string() }),
    async execute({ file_path }) {
      return { success: true, output: await readFile(await inside(root, file_path), 'utf8') };
    },
  });
  const writeTextFile = defineTool({
    name: 'write_file',
    description: 'Writes a text file in the workspace.',
    inputSchema: z.object({ file_path: z.string(), content: z.string() }),
    async execute({ file_path, content }) {
      const target = await inside(root, file_path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
      return { success: true, output: `Wrote ${content.length} characters to ${file_path}` };
    },
  });
  return [listFiles, readTextFile, writeTextFile];
}
